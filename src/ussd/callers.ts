import type { UserRow } from '../auth/module.ts';
import type { UssdScreen } from '../providers/ussd/ussd-gateway.ts';
import { screens } from './screens.ts';

// Who may use the USSD channel (API.md 17.6), judged from the caller's phone on every step, so that
// switching USSD off in the app, or an operator's freeze, takes effect on the very next callback:
// a registered number, USSD switched on, Tier 1, a PIN set, not frozen. Anyone else is told what to
// do in the app. The payment's own checks (authorise, the debit's freeze rule) judge again under
// their locks: this only spares the person a menu they cannot use.

/** What the judgement reads of the user (auth's row, through its api). */
export type UssdUser = Pick<
  UserRow,
  'id' | 'ussd_enabled' | 'kyc_tier' | 'pin_hash' | 'frozen_at' | 'price_level'
>;

/** The END that turns the caller away, or null when they may go on. */
export function refusalOf(user: UssdUser | undefined): UssdScreen | null {
  if (user === undefined) return screens.unknownNumber();
  if (!user.ussd_enabled) return screens.ussdOff();
  if (user.kyc_tier < 1) return screens.tierRequired();
  if (user.pin_hash === null) return screens.pinNotSet();
  if (user.frozen_at !== null) return screens.frozen();
  return null;
}
