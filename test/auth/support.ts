import assert from 'node:assert/strict';
import type { Reachable, World } from '../helpers/world.ts';

// Small helpers shared by the account and session tests. Kept under test/auth/ because they only
// make sense for these flows; the general harness is test/helpers/world.ts.

/** The E.164 form of a local 0803... number, as the service stores it. */
export const e164 = (localPhone: string): string => {
  assert.match(localPhone, /^0\d{10}$/);
  return `+234${localPhone.slice(1)}`;
};

/** A 6-digit code guaranteed to differ from the given one. */
export const otherCode = (code: string): string => (code === '000000' ? '111111' : '000000');

/** Moves a sandbox service's clock forward (and runs the jobs that became due). */
export async function advanceClock(world: Reachable, seconds: number): Promise<void> {
  const response = await fetch(`${world.baseUrl}/__sandbox/clock`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ advanceSeconds: seconds }),
  });
  assert.equal(response.status, 200, `advancing the clock failed: ${await response.text()}`);
}

/** The last SMS the sandbox gateway received for a phone, or null when none was sent. */
export async function lastSms(
  world: World,
  phone: string,
): Promise<{ phone: string; message: string; code: string | null; sentAt: string } | null> {
  const response = await fetch(`${world.baseUrl}/__sandbox/sms?phone=${encodeURIComponent(phone)}`);
  if (response.status === 404) return null;
  assert.equal(response.status, 200);
  const body = (await response.json()) as {
    data: { phone: string; message: string; code: string | null; sentAt: string };
  };
  return body.data;
}

/** The field paths of a VALIDATION_ERROR's details.issues. */
export function issuePaths(details: Record<string, unknown> | undefined): string[] {
  assert.ok(details !== undefined, 'a validation error carries details');
  const issues = details.issues as Array<{ path: Array<string | number> }> | undefined;
  assert.ok(Array.isArray(issues) && issues.length > 0, 'details.issues lists at least one issue');
  return issues.map((issue) => issue.path.join('.'));
}
