import { redirect } from '@tanstack/react-router';
import { session } from './api/session.ts';

/** A screen for signed-in people: anyone else goes to sign-in, and comes back after. */
export function requireSignIn({ location }: { location: { href: string } }): void {
  if (!session.signedIn()) throw redirect({ to: '/sign-in', search: { next: location.href } });
}
