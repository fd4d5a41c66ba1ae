import type { UserRow } from '../auth/module.ts';
import type { BeneficiariesApi } from '../beneficiaries/module.ts';
import { listBeneficiariesOutput } from '../beneficiaries/schemas.ts';
import type { BulkOrdersApi } from '../bulk-orders/module.ts';
import { listBulkOrdersOutput } from '../bulk-orders/schemas.ts';
import type { DisputesApi } from '../disputes/module.ts';
import { listMyDisputesOutput } from '../disputes/schemas.ts';
import type { GrowthApi } from '../growth/module.ts';
import { checkinStatus, referralStatus } from '../growth/schemas.ts';
import type { KycModule } from '../kyc/module.ts';
import { kycStatusOutput } from '../kyc/schemas.ts';
import type { NotificationsModule } from '../notifications/module.ts';
import { listNotificationsOutput, notificationSettings } from '../notifications/schemas.ts';
import { everyRow } from '../paging.ts';
import type { PushApi } from '../push/module.ts';
import type { SavingsApi } from '../savings/module.ts';
import { listSavingsLocksOutput } from '../savings/schemas.ts';
import type { SchedulesApi } from '../schedules/module.ts';
import { listSchedulesOutput } from '../schedules/schemas.ts';
import type { VtuApi } from '../vtu/module.ts';
import { listMyVtuTransactionsOutput } from '../vtu/schemas.ts';
import type { WalletApi } from '../wallet/module.ts';
import { listTransactionsOutput, walletView } from '../wallet/schemas.ts';

// The file of a data export (API.md 17.3): everything billrail keeps about the person, read from
// each domain through its api (never its tables), in the shapes the person's own screens get. Each
// list goes through that operation's answer schema, as the router does, so that no internal field
// of a view reaches the file. Nothing of anyone else: a transfer names the other person only by the
// masked public name the wallet history showed (transfers' counterpartiesOf), an invitee only by the
// masked name getMyReferralStatus gives; devices by push service, without their keys.

/** Where the file's sections come from: a function of each domain's api. */
export type ExportSources = {
  /** The person's row (auth's api): the profile, picked field by field (no PIN hash, no freeze reason). */
  findUserById: (userId: string) => Promise<UserRow | undefined>;
  kycOf: KycModule['api']['personalDataOf'];
  walletOf: WalletApi['walletOf'];
  purchasesOf: VtuApi['personalDataOf'];
  savingsOf: SavingsApi['personalDataOf'];
  rewardsOf: GrowthApi['personalDataOf'];
  notificationsOf: NotificationsModule['api']['personalDataOf'];
  beneficiariesOf: BeneficiariesApi['personalDataOf'];
  schedulesOf: SchedulesApi['personalDataOf'];
  bulkOrdersOf: BulkOrdersApi['personalDataOf'];
  disputesOf: DisputesApi['personalDataOf'];
  pushDevicesOf: PushApi['personalDataOf'];
};

/** The file's first line of what it is, for whoever opens it. */
const about =
  'A copy of the data billrail keeps about you (Nigeria Data Protection Act 2023, s.38). Amounts are in naira; times are UTC (ISO 8601).';

/** The JSON document of one person's export, built at `now`; undefined when the person does not exist. */
export async function exportFileOf(
  sources: ExportSources,
  userId: string,
  now: Date,
): Promise<Record<string, unknown> | undefined> {
  const user = await sources.findUserById(userId);
  if (user === undefined) return undefined;
  const [
    kyc,
    wallet,
    purchases,
    savings,
    rewards,
    notifications,
    beneficiaries,
    schedules,
    bulkOrders,
    disputes,
    push,
  ] = await Promise.all([
    sources.kycOf(userId),
    sources.walletOf(userId, everyRow.limit),
    sources.purchasesOf(userId),
    sources.savingsOf(userId),
    sources.rewardsOf(userId),
    sources.notificationsOf(userId),
    sources.beneficiariesOf(userId),
    sources.schedulesOf(userId),
    sources.bulkOrdersOf(userId),
    sources.disputesOf(userId),
    sources.pushDevicesOf(userId),
  ]);
  return {
    about,
    exportedAt: now.toISOString(),
    // The account's own columns, as kept: when the email and the names were verified, not just whether.
    profile: {
      id: user.id,
      phone: user.phone,
      firstName: user.first_name,
      lastName: user.last_name,
      namesVerifiedAt: user.name_verified_at?.toISOString() ?? null,
      email: user.email,
      emailVerifiedAt: user.email_verified_at?.toISOString() ?? null,
      referralCode: user.referral_code,
      referredByCode: user.referred_by_code,
      frozenAt: user.frozen_at?.toISOString() ?? null,
      createdAt: user.created_at.toISOString(),
    },
    kyc: { ...kycStatusOutput.parse(kyc.status), submissions: kyc.submissions },
    wallet: {
      balances: walletView.parse(wallet.balances),
      movements: listTransactionsOutput.shape.items.parse(wallet.movements),
    },
    purchases: listMyVtuTransactionsOutput.shape.items.parse(purchases),
    savings: listSavingsLocksOutput.shape.items.parse(savings),
    rewards: {
      checkin: checkinStatus.parse(rewards.checkin),
      checkinClaims: rewards.checkinClaims,
      milestones: rewards.milestones,
      referral: referralStatus.parse(rewards.referral),
    },
    notifications: {
      inbox: listNotificationsOutput.shape.items.parse(notifications.inbox),
      settings: notificationSettings.parse(notifications.settings),
    },
    beneficiaries: listBeneficiariesOutput.shape.items.parse(beneficiaries),
    schedules: listSchedulesOutput.shape.items.parse(schedules),
    bulkOrders: listBulkOrdersOutput.shape.items.parse(bulkOrders),
    disputes: listMyDisputesOutput.shape.items.parse(disputes),
    devices: { pushSubscriptions: push },
  };
}
