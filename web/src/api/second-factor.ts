// The admin's second factor (API.md section 17.4), asked for in one place. Any admin call the service
// refuses with 403 SECOND_FACTOR_REQUIRED waits here (client.ts `call`) while the admin area's dialog
// (components/second-factor.tsx, mounted by the admin layout) asks for the authenticator's code, or
// enrols one first; once the session is verified the call is sent again, so the screen carries on
// with what the admin was doing. Calls refused at once share one prompt. Where no dialog is mounted
// (outside the admin area) nothing asks: the refusal is the caller's, as any other.

export type SecondFactorPrompt = {
  /** False when the admin has no confirmed authenticator yet: enrolment comes first. */
  enrolled: boolean;
};

type Pending = { prompt: SecondFactorPrompt; answer: Promise<boolean>; settle: (verified: boolean) => void };

let pending: Pending | null = null;
let hosts = 0;
const listeners = new Set<() => void>();
const notify = () => {
  for (const listener of listeners) listener();
};

/** Whether the refusal's details say the admin has not enrolled (details.enrolled: false). */
export const enrolmentNeeded = (details: Record<string, unknown> | undefined): boolean =>
  details?.enrolled === false;

export const secondFactor = {
  /** A dialog that can ask is mounted; the returned function unmounts it. */
  host(): () => void {
    hosts += 1;
    return () => {
      hosts -= 1;
      if (hosts === 0) secondFactor.settle(false);
    };
  },
  /**
   * Waits for the admin to verify the session: true once verified (send the call again), false when
   * they gave up or nothing can ask.
   */
  ask(prompt: SecondFactorPrompt): Promise<boolean> {
    if (hosts === 0) return Promise.resolve(false);
    if (pending !== null) {
      // A later refusal that says enrolment is needed wins: the code alone could not be checked.
      if (pending.prompt.enrolled && !prompt.enrolled) {
        pending = { ...pending, prompt };
        notify();
      }
      return pending.answer;
    }
    let settle: (verified: boolean) => void = () => {};
    const answer = new Promise<boolean>((resolve) => {
      settle = resolve;
    });
    pending = { prompt, answer, settle };
    notify();
    return answer;
  },
  /** What the dialog asks now, or null: for useSyncExternalStore. */
  current(): SecondFactorPrompt | null {
    return pending?.prompt ?? null;
  },
  /** The dialog's end: verified (the waiting calls go again) or given up (they fail as refused). */
  settle(verified: boolean): void {
    const ended = pending;
    if (ended === null) return;
    pending = null;
    ended.settle(verified);
    notify();
  },
  subscribe(listener: () => void): () => void {
    listeners.add(listener);
    return () => listeners.delete(listener);
  },
};
