import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { type CallError, call, type Output } from '../../api/client.ts';
import { Button, ErrorNote, Waiting } from '../../components/ui.tsx';

// The person's own account number (Tier 2, SPEC.md item 12): money sent to it from any bank lands
// in the wallet. It is the same account every time, so it is asked for once per visit and shown at
// once, with Copy (the number, what a banking app's transfer form wants) and Share (all three
// details, to send to whoever pays in: the phone's share sheet, or copied where there is none).

type Account = Output<'requestDedicatedAccount'>;

const shareText = (account: Account) =>
  `Bank: ${account.bankName}, Account: ${account.accountNumber}, Name: ${account.accountName}`;

/**
 * The two 409s of requestDedicatedAccount carry no details.reason (src/funding/dedicated-accounts.ts),
 * so they are told apart by what they are about.
 */
function refusalWords(error: CallError | null): string | undefined {
  if (error?.code !== 'CONFLICT') return undefined;
  return /email/i.test(error.message)
    ? 'The email on your profile is used by another account. Change it in Settings to get your account number.'
    : 'Your account number is still being opened. Try again in a moment.';
}

export function DedicatedAccount() {
  // requestDedicatedAccount is a POST, but its answer never changes (the first call opens the account).
  const account = useQuery({
    queryKey: ['dedicated-account'],
    queryFn: () => call('requestDedicatedAccount', {}),
    staleTime: Number.POSITIVE_INFINITY,
    retry: false,
  });
  const [done, setDone] = useState<string | null>(null);

  async function copy(text: string, what: string) {
    try {
      await navigator.clipboard.writeText(text);
      setDone(`${what} copied.`);
    } catch {
      setDone(`Could not copy. Press and hold the ${what.toLowerCase()} to copy it.`);
    }
  }
  async function share(details: Account) {
    setDone(null);
    if (typeof navigator.share === 'function') {
      // Cancelling the share sheet is not a failure worth a message.
      await navigator
        .share({ title: 'My billrail account', text: shareText(details) })
        .catch(() => undefined);
      return;
    }
    await copy(shareText(details), 'Account details');
  }

  return (
    <section aria-labelledby="transfer-title" className="flex flex-col gap-3 rounded-xl bg-brand-light p-4">
      <h2 id="transfer-title" className="text-lg font-semibold">
        By bank transfer
      </h2>
      {account.isPending ? <Waiting label="Getting your account number" /> : null}
      <ErrorNote
        error={account.error as CallError | null}
        message={refusalWords(account.error as CallError | null)}
      />
      {account.error ? (
        <Button variant="secondary" onClick={() => void account.refetch()}>
          Try again
        </Button>
      ) : null}
      {account.data ? (
        <>
          <dl className="grid grid-cols-[auto_1fr] gap-x-3 gap-y-1" data-testid="dedicated-account">
            <dt>Bank</dt>
            <dd className="font-semibold">{account.data.bankName}</dd>
            <dt>Account number</dt>
            <dd className="text-xl font-semibold tracking-wider whitespace-nowrap">
              {account.data.accountNumber}
            </dd>
            <dt>Account name</dt>
            <dd className="font-semibold">{account.data.accountName}</dd>
          </dl>
          <div className="flex gap-2">
            <Button onClick={() => void copy(account.data.accountNumber, 'Account number')}>Copy</Button>
            <Button variant="secondary" onClick={() => void share(account.data)}>
              Share
            </Button>
          </div>
        </>
      ) : null}
      <p role="status" aria-live="polite" className="text-sm font-medium">
        {done}
      </p>
      <p className="text-sm">
        Send money to it from any bank app. It is added to your wallet as soon as the bank confirms it.
      </p>
    </section>
  );
}
