import { randomUUID } from 'node:crypto';
import { nairaToKobo } from '../../src/money.ts';
import { toE164 } from '../../src/phone.ts';
import { ok, post, type SignedIn, type World } from '../helpers/world.ts';
import { kycUser, userAtTier } from '../kyc/kyc-support.ts';
import { fund, mtn, PIN } from '../vtu/purchase-support.ts';

// The USSD tests' gateway: each step POSTed to the callback as Africa's Talking posts it (a form of
// sessionId, serviceCode, phoneNumber, networkCode and every input so far joined by '*'), and the
// answer read as the gateway reads it.

export { PIN };

export type Answer = { status: number; type: 'CON' | 'END' | null; screen: string; body: string };

export const callbackUrl = (world: World, token = world.ctx.config.ussd.callbackToken!) =>
  `${world.baseUrl}/api/public/ussd/${token}`;

/** One step: the session's inputs so far (the PIN among them, as the gateway sends it). */
export async function dial(
  world: World,
  step: { phone: string; sessionId: string; inputs: readonly string[]; networkCode?: string; token?: string },
): Promise<Answer> {
  const form = new URLSearchParams({
    sessionId: step.sessionId,
    serviceCode: world.ctx.config.ussd.serviceCode,
    phoneNumber: toE164(step.phone) ?? step.phone,
    networkCode: step.networkCode ?? '62130',
    text: step.inputs.join('*'),
  });
  const response = await fetch(callbackUrl(world, step.token), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: form.toString(),
  });
  const body = await response.text();
  const match = /^(CON|END) ([\s\S]*)$/.exec(body);
  return {
    status: response.status,
    type: (match?.[1] as 'CON' | 'END' | undefined) ?? null,
    screen: match?.[2] ?? '',
    body,
  };
}

/** A whole session, step by step from the first screen: every answer, in order. */
export async function session(
  world: World,
  phone: string,
  inputs: readonly string[],
  options: { sessionId?: string; networkCode?: string } = {},
): Promise<Answer[]> {
  const sessionId = options.sessionId ?? `ATUid_${randomUUID().replaceAll('-', '')}`;
  const answers: Answer[] = [];
  for (let i = 0; i <= inputs.length; i++) {
    answers.push(await dial(world, { phone, sessionId, inputs: inputs.slice(0, i), ...options }));
  }
  return answers;
}

/** A person who may use USSD: Tier 1, a PIN, a funded wallet, USSD switched on; an MTN phone ending in `last`. */
export async function ussdUser(world: World, walletNaira: number, last = '5'): Promise<SignedIn> {
  const user = await userAtTier(world, 1, await kycUser(world, undefined, mtn(last)));
  ok(await post(world, 'setTransactionPin', { pin: PIN }, { token: user.accessToken }));
  if (walletNaira > 0) await fund(world, user.userId, walletNaira);
  ok(await post(world, 'setUssdEnabled', { enabled: true, pin: PIN }, { token: user.accessToken }));
  return user;
}

/** The wallet's balance now, kobo. */
export async function walletKobo(world: World, userId: string): Promise<bigint> {
  const { balances } = await world.ctx.modules.wallet.api.walletOf(userId, 1);
  return nairaToKobo(balances.balance);
}
