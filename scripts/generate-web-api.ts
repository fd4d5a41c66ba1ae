import { writeFile } from 'node:fs/promises';
import { apiFiles } from '../web/tools/api-types.ts';

// `npm run web:api`: regenerates the web client's API types (and its list of GET operations) from
// the service's /openapi.json.
for (const file of await apiFiles()) {
  await writeFile(file.path, file.content);
  console.log(`wrote ${file.path}`);
}
