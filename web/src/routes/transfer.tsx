import { useQuery } from '@tanstack/react-query';
import { createFileRoute, Link, useNavigate } from '@tanstack/react-router';
import { CircleCheck } from 'lucide-react';
import { useState } from 'react';
import { toE164 } from '../../../src/shared/phone-number.ts';
import { type CallError, call, type Output } from '../api/client.ts';
import { requireSignIn } from '../auth-guard.ts';
import { Beneficiaries, SaveAs, useSaveAs } from '../components/beneficiaries.tsx';
import { PinPayForm } from '../components/pin-pay-form.tsx';
import { PriceSummary } from '../components/price-summary.tsx';
import { Receipt, type ReceiptContent } from '../components/receipt.tsx';
import { TierGate } from '../components/tier-gate.tsx';
import { Button, ErrorNote, Field, Screen, Waiting } from '../components/ui.tsx';
import { formatNairaNumber, parseNaira } from '../format.ts';
import { type Prefill, validatePrefill } from '../payments/prefill.ts';
import { usePayment } from '../payments/use-payment.ts';

// Send money to another billrail user (API.md section 14): the number (or one tap on a saved one),
// whose owner's name is looked up as soon as it is complete, the amount and a note; then the summary
// with that name, verified or plainly marked as not, before the PIN; then a receipt. An answer lost
// after Send is looked for in the wallet history rather than sent again.

type Sent = Output<'transferToUser'>;
type Found = Output<'lookupRecipient'>;

/** A transfer made in this tab, kept with its receipt's details: the receipt outlives a reload. */
type SentReceipt = { transfer: Sent; phone: string; narration: string };
const sentKey = 'billrail.transferSent';

/** The receipt of the transfer the address names (`?sent=<reference>`), when this tab made it. */
function readSent(reference: string | undefined): SentReceipt | null {
  if (reference === undefined) return null;
  try {
    const kept = JSON.parse(sessionStorage.getItem(sentKey) ?? 'null') as SentReceipt | null;
    return kept?.transfer.reference === reference ? kept : null;
  } catch {
    return null;
  }
}

/** How far before Send a lost transfer may have been recorded (the two clocks may differ). */
const clockSlackMs = 60_000;

/** Words for a failed look-up that say what is wrong with the number, not "We could not find that". */
function lookupProblem(error: CallError): string | undefined {
  if (error.code === 'NOT_FOUND')
    return 'No billrail account can receive money at this number yet. Check the number with its owner.';
  if (error.code === 'VALIDATION_ERROR') return 'That is your own number.';
  return undefined;
}

function Transfer() {
  const prefill = Route.useSearch();
  const navigate = useNavigate();
  const [phone, setPhone] = useState(prefill.recipient ?? '');
  const [amountText, setAmountText] = useState(prefill.amount?.toString() ?? '');
  const [narration, setNarration] = useState('');
  // Shown while the address names it, so a reload after Send shows the receipt, not an empty form
  // that invites sending again.
  const sent = readSent(prefill.sent);
  const amount = parseNaira(amountText);
  const complete = toE164(phone) !== null;
  const recipient = useQuery({
    queryKey: ['recipient', toE164(phone)],
    queryFn: () => call('lookupRecipient', { phone }),
    enabled: complete,
    staleTime: 60_000,
    retry: false,
  });
  const found = complete ? recipient.data : undefined;
  const note = narration.trim();
  const saveAs = useSaveAs('transfer');
  const payment = usePayment('transferToUser', {
    onDone: async (transfer) => {
      await saveAs.save({ recipient: phone });
      sessionStorage.setItem(
        sentKey,
        JSON.stringify({ transfer, phone, narration: note } satisfies SentReceipt),
      );
      await navigate({ to: '/transfer', search: { sent: transfer.reference }, replace: true });
    },
    // A lost answer: the transfer, if it went through, is a transfer out of this amount since Send.
    find: async (since) => {
      const recent = await call('listTransactions', {
        kind: 'transfer_out',
        from: new Date(since.getTime() - clockSlackMs).toISOString(),
        limit: 10,
      });
      const match = recent.items.find((item) => item.amount === amount);
      if (match === undefined) return null;
      return {
        id: match.id,
        // The history lists the transfer's posting (transfer:TRF...); its receipt shows the transfer's own.
        reference: match.reference.replace(/^transfer:/, ''),
        amount: match.amount,
        recipient: { name: match.counterparty ?? found?.name ?? phone },
        createdAt: match.createdAt,
      };
    },
  });

  if (sent !== null) return <TransferReceipt {...sent} />;

  if (payment.confirming && found !== undefined && amount !== null) {
    return (
      <Screen title="Confirm transfer">
        <RecipientNote {...found} />
        <PriceSummary
          rows={[
            { label: 'To', value: found.name },
            { label: 'Phone', value: phone },
            ...(note === '' ? [] : [{ label: 'Note', value: note }]),
          ]}
          total={amount}
          totalLabel="You send"
        />
        <SaveAs choice={saveAs} recipient={phone} />
        <PinPayForm
          payment={payment}
          price={amount}
          onPay={(pin) => payment.pay({ phone, amount, pin, ...(note === '' ? {} : { narration: note }) })}
        >
          Send {formatNairaNumber(amount)}
        </PinPayForm>
      </Screen>
    );
  }

  const lookupError = complete ? (recipient.error as CallError | null) : null;
  return (
    <Screen title="Send money">
      <TierGate need={2} what="Sending money">
        <Beneficiaries service="transfer" onPick={(picked) => setPhone(picked.recipient)} />
        <form
          className="flex flex-col gap-4"
          onSubmit={(event) => {
            event.preventDefault();
            if (found !== undefined && amount !== null) payment.open();
          }}
        >
          <Field
            label="Their phone number"
            value={phone}
            onChange={setPhone}
            inputMode="tel"
            autoComplete="tel"
            hint="The number of their billrail account, like 0803 123 4567"
          />
          {complete && recipient.isFetching ? <Waiting label="Finding who this is" /> : null}
          {found !== undefined ? <RecipientNote {...found} /> : null}
          <ErrorNote error={lookupError} message={lookupError ? lookupProblem(lookupError) : undefined} />
          <Field
            label="Amount (₦)"
            value={amountText}
            onChange={setAmountText}
            inputMode="decimal"
            hint="At least ₦100"
            error={amountText !== '' && amount === null ? 'Type an amount such as 1,500' : undefined}
          />
          <Field label="Note (optional)" value={narration} onChange={setNarration} maxLength={100} />
          <Button type="submit" disabled={found === undefined || amount === null}>
            Continue
          </Button>
        </form>
      </TierGate>
    </Screen>
  );
}

/** The service shows a person who gave no name by their phone, its middle hidden (0803****567). */
const maskedPhone = /^\d{4}\*{4}\d{3}$/;

/**
 * Who the money goes to, and how far to trust the name: a name verified with an NIN, or a warning
 * (set apart, not in the same look) when it is only what they typed, or when they gave none.
 */
function RecipientNote({ name, nameVerified }: Found) {
  if (nameVerified) {
    return (
      <p className="rounded-lg bg-brand-light p-3" data-testid="recipient">
        Sending to <strong>{name}</strong>
        <span className="block text-sm">Name verified with their NIN.</span>
      </p>
    );
  }
  return (
    <p
      className="rounded-lg border-2 border-amber-500 bg-amber-50 p-3 text-amber-950"
      data-testid="recipient"
    >
      Sending to <strong>{name}</strong>
      <span className="block text-sm">
        {maskedPhone.test(name)
          ? 'This person has not given a name, and none is verified.'
          : 'This name is the one they typed, not verified with an NIN.'}{' '}
        Make sure you know who owns this number before you send.
      </span>
    </p>
  );
}

/** After Send: the receipt (what was sent, to whom, its reference and time), to keep or to share. */
function TransferReceipt({
  transfer,
  phone,
  narration,
}: {
  transfer: Sent;
  phone: string;
  narration: string;
}) {
  const receipt: ReceiptContent = {
    title: 'Money sent',
    amount: transfer.amount,
    direction: 'debit',
    // The transfer is one posting: once answered, the money is in their wallet.
    status: 'Successful',
    lines: [
      { label: 'To', value: transfer.recipient.name },
      { label: 'Phone', value: phone },
      ...(narration === '' ? [] : [{ label: 'Note', value: narration }]),
    ],
    reference: transfer.reference,
    createdAt: transfer.createdAt,
  };
  return (
    <Screen title="Money sent">
      <div role="status" className="flex items-center gap-3">
        <CircleCheck aria-hidden="true" size={40} className="shrink-0 text-brand" />
        <p className="text-lg">
          It is in <strong>{transfer.recipient.name}</strong>&apos;s wallet now.
        </p>
      </div>
      <Receipt receipt={receipt} />
      <Link to="/" className="rounded-lg bg-brand px-4 py-3 text-center text-lg font-semibold text-white">
        Done
      </Link>
      <Link to="/transactions" className="text-center font-semibold text-brand underline">
        See it in your history
      </Link>
    </Screen>
  );
}

export const Route = createFileRoute('/transfer')({
  beforeLoad: requireSignIn,
  validateSearch: (search: Record<string, unknown>): Prefill & { sent?: string } => ({
    ...validatePrefill(search),
    ...(typeof search.sent === 'string' ? { sent: search.sent } : {}),
  }),
  component: Transfer,
});
