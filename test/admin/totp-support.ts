import { Secret, TOTP } from 'otpauth';
import { ok, post, type SignedIn, type World } from '../helpers/world.ts';

// An authenticator app for the tests of the admins' second factor: the code of a secret at the
// service's (sandbox) clock, and an admin enrolled and verified in one step.

/** The 6-digit code of a base32 secret at the world's clock, `stepsAhead` periods of 30 s later. */
export function codeAt(world: World, secret: string, stepsAhead = 0): string {
  return TOTP.generate({
    secret: Secret.fromBase32(secret),
    algorithm: 'SHA1',
    digits: 6,
    period: 30,
    timestamp: world.ctx.clock.now().getTime() + stepsAhead * 30_000,
  });
}

/** A code of the secret that is not the given one (a wrong code that cannot be right by chance). */
export function wrongCode(right: string): string {
  return right === '000000' ? '111111' : '000000';
}

/** Enrols the admin and confirms with a first code: the session is verified; the secret returned. */
export async function enrolAndConfirm(world: World, admin: SignedIn): Promise<string> {
  const { secret } = ok(
    await post<{ secret: string; otpauthUrl: string }>(
      world,
      'adminEnrolTotp',
      {},
      { token: admin.accessToken },
    ),
  );
  ok(await post(world, 'adminConfirmTotp', { code: codeAt(world, secret) }, { token: admin.accessToken }));
  return secret;
}

/** Moves the world's sandbox clock on (no job runs). */
export function advance(world: World, seconds: number): void {
  world.ctx.sandboxClock!.advance(seconds);
}
