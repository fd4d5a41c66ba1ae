import { randomBytes } from 'node:crypto';
import { v7 } from 'uuid';

/** Time-ordered ids (UUIDv7) keep b-tree inserts local and sort by creation. */
export const newId = (): string => v7();

/** A readable, unique reference such as `top_01J...`: prefix plus 16 random bytes in base32-ish hex. */
export const newReference = (prefix: string): string => `${prefix}_${randomBytes(12).toString('hex')}`;
