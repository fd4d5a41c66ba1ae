import { defineOperation } from '../operation.ts';
import * as s from './schemas.ts';
import { type DataExportDeps, getDataExport, requestDataExport } from './service.ts';

const tags = ['data-export'];

/** The data export's operations, closed over the module's deps. */
export const dataExportOperations = (deps: DataExportDeps) => [
  defineOperation({
    name: 'requestDataExport',
    method: 'POST',
    auth: 'user',
    summary:
      'Ask for a copy of your data (Nigeria Data Protection Act 2023): one JSON file, built in the background, kept 7 days; you are notified when it is ready (getDataExport then gives its URL). Once a day: another request within 24 hours is 409 CONFLICT with details.nextAllowedAt',
    tags,
    input: s.requestDataExportInput,
    output: s.requestDataExportOutput,
    errors: ['CONFLICT'],
    handler: ({ caller, withCommit }) => requestDataExport(deps, withCommit, caller.userId),
  }),
  defineOperation({
    name: 'getDataExport',
    method: 'GET',
    auth: 'user',
    summary:
      "One of your data exports: preparing, ready (with a download URL signed for at most 10 minutes, and when the file is deleted) or expired (deleted after 7 days). Another person's id is 404",
    tags,
    input: s.getDataExportInput,
    output: s.dataExportView,
    errors: ['NOT_FOUND'],
    handler: ({ caller, input }) => getDataExport(deps, caller.userId, input.id),
  }),
];
