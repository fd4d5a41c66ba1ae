import { writeFile } from 'node:fs/promises';
import { apiTypes, apiTypesPath } from '../web/tools/api-types.ts';

// `npm run web:api`: regenerates the web client's API types from the service's /openapi.json.
await writeFile(apiTypesPath, await apiTypes());
console.log(`wrote ${apiTypesPath}`);
