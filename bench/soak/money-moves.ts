import { nextPhone } from '../common.ts';
import { call, must, type Session, signIn } from './client.ts';
import { count, koboOf, type Person } from './model.ts';
import { between, pick, type Soak, untilStopped } from './soak-context.ts';

// The wallet's other movements: transfers between people, savings locks made and broken, the
// day's check-in (and a second claim, refused), and votes in the admin's poll (and a second vote,
// refused); and sign-ins of new people. Each definite answer moves the model; a refusal moves nothing.

const BREAK_PENALTY_PERCENT = 5n;

type Step = (soak: Soak, person: Person) => Promise<void>;

/** Sends once, retried as the client retries; an answer never heard is retried after the quiet. */
async function settled(
  soak: Soak,
  what: string,
  send: (key: string) => ReturnType<typeof call>,
  onAnswer: (status: number, data: unknown, code: string | undefined, afterLostAnswer: boolean) => void,
): Promise<void> {
  const key = crypto.randomUUID();
  const attempt = async () => {
    const outcome = await send(key);
    if (outcome.kind === 'unresolved') return false;
    onAnswer(outcome.status, outcome.body.data, outcome.body.error?.code, outcome.afterLostAnswer);
    count(
      soak.model,
      what,
      outcome.status === 200 ? 'done' : `HTTP ${outcome.status} ${outcome.body.error?.code ?? ''}`,
    );
    return true;
  };
  if (!(await attempt())) soak.model.unresolved.push({ what: `${what} ${key}`, retry: attempt });
}

const transfer: Step = async (soak, person) => {
  const to = pick(soak.model.people.filter((p) => p !== person));
  const naira = between(1, 20) * 100;
  await settled(
    soak,
    'transferToUser',
    (key) =>
      call(
        soak.client,
        'transferToUser',
        { phone: to.session.phone, amount: naira, pin: soak.pin },
        { session: person.session, key },
      ),
    (status) => {
      if (status !== 200) return;
      person.baseKobo -= koboOf(naira);
      person.transferredOutKobo += koboOf(naira);
      to.baseKobo += koboOf(naira);
    },
  );
};

const lock: Step = async (soak, person) => {
  const naira = between(1, 20) * 100;
  await settled(
    soak,
    'createSavingsLock',
    (key) =>
      call(soak.client, 'createSavingsLock', { amount: naira, days: 30 }, { session: person.session, key }),
    (status) => {
      if (status !== 200) return;
      person.baseKobo -= koboOf(naira);
      person.lockedKobo += koboOf(naira);
    },
  );
};

const breakOne: Step = async (soak, person) => {
  const locks = await must<{ items: { id: string; amount: number }[] }>(
    call(
      soak.client,
      'listSavingsLocks',
      { status: 'active', limit: 100 },
      { session: person.session, method: 'GET' },
    ),
    'listSavingsLocks',
  );
  const chosen = locks.items[0];
  if (chosen === undefined) return;
  const amount = koboOf(chosen.amount);
  const penalty = (amount * BREAK_PENALTY_PERCENT) / 100n;
  await settled(
    soak,
    'breakSavingsLock',
    (key) => call(soak.client, 'breakSavingsLock', { lockId: chosen.id }, { session: person.session, key }),
    (status) => {
      if (status !== 200) return;
      person.lockedKobo -= amount;
      person.baseKobo += amount - penalty;
    },
  );
};

/** The reward per claim, from the service's answer to getCheckinStatus at the start. */
const checkin =
  (rewardKobo: bigint): Step =>
  async (soak, person) => {
    await settled(
      soak,
      'claimCheckin',
      (key) => call(soak.client, 'claimCheckin', {}, { session: person.session, key }),
      (status) => {
        if (status === 200) person.checkinKobo += rewardKobo;
      },
    );
  };

const vote =
  (poll: { id: string; options: { id: string }[] }): Step =>
  async (soak, person) => {
    const option = pick(poll.options);
    await settled(
      soak,
      'votePoll',
      (key) =>
        call(
          soak.client,
          'votePoll',
          { pollId: poll.id, optionId: option.id },
          { session: person.session, key },
        ),
      (status, _data, code, afterLostAnswer) => {
        // A try whose answer was lost (its process killed) may have cast the vote before its
        // Idempotency-Key was completed: the retry, run again once the key is released, is then
        // refused as a second vote. That 409 after a lost answer, from someone with no vote counted
        // yet, is the lost try's vote (one person's own second vote is refused the same way, but
        // only after a vote of theirs was counted).
        const castByLostTry = status === 409 && code === 'CONFLICT' && afterLostAnswer;
        if (status !== 200 && !(castByLostTry && !soak.model.voters.has(person.session.phone))) return;
        soak.model.voters.add(person.session.phone);
        soak.model.votes.set(option.id, (soak.model.votes.get(option.id) ?? 0) + 1);
      },
    );
  };

/** Someone new signs in (requestOtp, the SMS at the sandbox, verifyOtp) and looks at the wallet. */
const visitor: Step = async (soak) => {
  let session: Session;
  try {
    session = await signIn(soak.client, nextPhone());
  } catch (error) {
    // A sign-in whose request died with an API process holds its key until the key is stale: the
    // person gives up (nothing of theirs is owed). Any other refusal is a failure of the run.
    const message = (error as Error).message;
    if (!/IDEMPOTENCY_IN_PROGRESS|no answer/.test(message)) throw error;
    count(soak.model, 'sign-in of someone new', `gave up: ${message.split(':').at(-1)?.trim()}`);
    return;
  }
  await must(call(soak.client, 'getWallet', {}, { session, method: 'GET' }), 'getWallet');
  count(soak.model, 'sign-in of someone new', 'done');
};

/** The admin's poll, created before the run. */
export async function createPoll(soak: Soak): Promise<{ id: string; options: { id: string }[] }> {
  const broadcast = await must<{ poll?: { id: string; options: { id: string }[] } }>(
    call(
      soak.client,
      'adminCreateBroadcast',
      {
        title: 'Soak poll',
        body: 'Which do you buy most?',
        poll: { question: 'Which?', options: ['Airtime', 'Data', 'Power'] },
      },
      { session: soak.admin },
    ),
    'adminCreateBroadcast',
  );
  if (broadcast.poll === undefined) throw new Error('adminCreateBroadcast answered without its poll');
  return broadcast.poll;
}

export async function checkinRewardKobo(soak: Soak, person: Person): Promise<bigint> {
  const status = await must<{ reward: number }>(
    call(soak.client, 'getCheckinStatus', {}, { session: person.session, method: 'GET' }),
    'getCheckinStatus',
  );
  return koboOf(status.reward);
}

export function driveMoneyMoves(
  soak: Soak,
  poll: { id: string; options: { id: string }[] },
  rewardKobo: bigint,
): Promise<void> {
  const steps: Step[] = [transfer, transfer, lock, lock, breakOne, checkin(rewardKobo), vote(poll), visitor];
  return untilStopped(soak, async () => {
    await pick(steps)(soak, pick(soak.model.people));
  });
}
