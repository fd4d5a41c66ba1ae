import { v7 } from 'uuid';

/** Time-ordered ids (UUIDv7) keep b-tree inserts local and sort by creation. */
export const newId = (): string => v7();
