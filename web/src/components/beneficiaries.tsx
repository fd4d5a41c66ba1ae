import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Trash2 } from 'lucide-react';
import { useId, useState } from 'react';
import { type Network, networkNames, networks } from '../../../src/shared/networks.ts';
import { call, type Input, type Output } from '../api/client.ts';
import { shownPhone } from '../format.ts';
import { ProviderLogo } from './provider-logo.tsx';
import { Field } from './ui.tsx';

// Beneficiaries (API.md section 16): the numbers, meters, smartcards and accounts a person pays again
// and again, offered above a payment form so that one tap fills it. The saved ones are kept by the
// service, so they follow the person to another phone; the recent ones come from their last purchases
// of the service. Saving is by choice, on the confirm step ("Save as Mum"), and happens once the
// payment has succeeded, so a number typed wrong and refused is never kept.

export type BeneficiaryService = Input<'saveBeneficiary'>['service'];
type Saved = Output<'listBeneficiaries'>['items'][number];

/** What one tap fills in: the recipient as the form's field takes it, and what else was kept with it. */
export type Recipient = { recipient: string; network?: Network; details?: Record<string, string> };

/** The services whose recipient is a phone number: kept in E.164, typed and shown in the local form. */
const phoneServices: ReadonlySet<BeneficiaryService> = new Set(['airtime', 'data', 'transfer', 'education']);
/** The services whose purchases the history lists, to offer their recent recipients. */
const purchaseServices = ['airtime', 'data', 'electricity', 'cable', 'betting', 'education'] as const;
type PurchaseService = (typeof purchaseServices)[number];
/** How many recent recipients are offered besides the saved ones. */
const recentShownMax = 4;

/** The recipient as the form shows it: 08031234567 for a phone, as kept for anything else. */
function shown(service: BeneficiaryService, recipient: string): string {
  return phoneServices.has(service) ? shownPhone(recipient) : recipient;
}

/** Whether two recipients are the same one, whichever way a phone number was written. */
function same(service: BeneficiaryService, a: string, b: string): boolean {
  return shown(service, a.trim()) === shown(service, b.trim());
}

const asNetwork = (value: string | undefined): Network | undefined =>
  networks.find((network) => network === value);

const savedKey = (service: BeneficiaryService) => ['beneficiaries', service] as const;

function useSaved(service: BeneficiaryService) {
  return useQuery({
    queryKey: savedKey(service),
    queryFn: () => call('listBeneficiaries', { service }),
    staleTime: 60_000,
  });
}

/**
 * What a recent purchase's order says besides the recipient, in the keys its screen saves a
 * beneficiary's details under (the disco and meter type, the cable provider, the betting company,
 * the exam), so that a tap on a recent meter fills its disco too.
 */
function detailsOf(
  service: PurchaseService,
  order: Output<'listMyVtuTransactions'>['items'][number]['order'],
): Record<string, string> | undefined {
  const provider = order?.provider;
  if (provider === undefined) return undefined;
  switch (service) {
    case 'electricity':
      return order?.type === undefined ? { disco: provider } : { disco: provider, type: order.type };
    case 'cable':
      return { provider };
    case 'betting':
      return { company: provider };
    case 'education':
      return { exam: provider };
    default:
      return undefined;
  }
}

/** The last few recipients of this service's purchases that are not saved already, newest first. */
function useRecent(service: BeneficiaryService, saved: readonly Saved[]): Recipient[] {
  const purchases = purchaseServices.includes(service as PurchaseService);
  const recent = useQuery({
    queryKey: ['recent-recipients', service],
    queryFn: () => call('listMyVtuTransactions', { service: service as PurchaseService, limit: 20 }),
    enabled: purchases,
    staleTime: 60_000,
  });
  const found: Recipient[] = [];
  for (const purchase of recent.data?.items ?? []) {
    // A failed purchase may have failed for its number: offer only numbers that worked.
    if (purchase.status === 'failed') continue;
    const known = (r: { recipient: string }) => same(service, r.recipient, purchase.recipient);
    if (saved.some(known) || found.some(known)) continue;
    const network = asNetwork(purchase.network);
    const details = detailsOf(service as PurchaseService, purchase.order);
    found.push({
      recipient: shown(service, purchase.recipient),
      ...(network === undefined ? {} : { network }),
      ...(details === undefined ? {} : { details }),
    });
    if (found.length === recentShownMax) break;
  }
  return found;
}

/**
 * The saved and recent recipients of `service`, above its form: a tap on one calls `onPick` with
 * what it fills in. "Manage" turns the saved ones into delete buttons. Nothing is shown while there
 * is nothing to offer, or when the list cannot be read (the form works without it).
 */
export function Beneficiaries(props: {
  service: BeneficiaryService;
  onPick: (recipient: Recipient) => void;
  /** A second line under the recipient, from what was kept with it (a disco, a bouquet's provider). */
  describe?: (recipient: Recipient) => string | undefined;
}) {
  const { service } = props;
  const headingId = useId();
  const queries = useQueryClient();
  const saved = useSaved(service).data?.items ?? [];
  const recent = useRecent(service, saved);
  const [managingChosen, setManaging] = useState(false);
  // With nothing saved left to delete, the recent ones are offered again.
  const managing = managingChosen && saved.length > 0;
  const [said, setSaid] = useState('');
  const remove = useMutation({
    mutationFn: (beneficiary: Saved) => call('deleteBeneficiary', { id: beneficiary.id }),
    onSuccess: async (_, beneficiary) => {
      setSaid(`${beneficiary.label} deleted.`);
      await queries.invalidateQueries({ queryKey: savedKey(service) });
    },
    onError: (_, beneficiary) => setSaid(`${beneficiary.label} could not be deleted. Try again.`),
  });

  if (saved.length === 0 && recent.length === 0) {
    return said === '' ? null : (
      <p role="status" className="text-gray-700">
        {said}
      </p>
    );
  }

  const recipientOf = (beneficiary: Saved): Recipient => {
    const network = asNetwork(beneficiary.network);
    return {
      recipient: shown(service, beneficiary.recipient),
      ...(network === undefined ? {} : { network }),
      ...(beneficiary.details === undefined ? {} : { details: beneficiary.details }),
    };
  };

  return (
    <section aria-labelledby={headingId} className="flex flex-col gap-2">
      <div className="flex items-center justify-between">
        <h2 id={headingId} className="font-medium">
          {saved.length > 0 ? 'Saved and recent' : 'Recent'}
        </h2>
        {saved.length > 0 ? (
          <button
            type="button"
            className="rounded-lg px-2 py-1 font-semibold text-brand"
            aria-pressed={managing}
            onClick={() => {
              setManaging(!managing);
              setSaid('');
            }}
          >
            {managing ? 'Done' : 'Manage'}
          </button>
        ) : null}
      </div>
      <ul className="flex gap-2 overflow-x-auto pb-1">
        {saved.map((beneficiary) => (
          <li key={beneficiary.id} className="shrink-0">
            {managing ? (
              <button
                type="button"
                className="flex items-center gap-2 rounded-xl border border-red-700 px-3 py-2 text-red-800"
                disabled={remove.isPending}
                onClick={() => remove.mutate(beneficiary)}
              >
                <Trash2 aria-hidden="true" size={18} />
                Delete {beneficiary.label}
              </button>
            ) : (
              <Chip
                title={beneficiary.label}
                recipient={recipientOf(beneficiary)}
                describe={props.describe}
                onPick={props.onPick}
              />
            )}
          </li>
        ))}
        {managing
          ? null
          : recent.map((recipient) => (
              <li key={recipient.recipient} className="shrink-0">
                <Chip
                  title={recipient.recipient}
                  recipient={recipient}
                  describe={props.describe}
                  onPick={props.onPick}
                />
              </li>
            ))}
      </ul>
      <p role="status" className="text-sm text-gray-700">
        {said}
      </p>
    </section>
  );
}

function Chip(props: {
  title: string;
  recipient: Recipient;
  describe: ((recipient: Recipient) => string | undefined) | undefined;
  onPick: (recipient: Recipient) => void;
}) {
  const { recipient } = props;
  const lines = [
    props.title === recipient.recipient ? undefined : recipient.recipient,
    props.describe?.(recipient) ?? (recipient.network ? networkNames[recipient.network] : undefined),
  ].filter((line) => line !== undefined);
  return (
    <button
      type="button"
      className="flex items-center gap-2 rounded-xl border border-gray-300 bg-white px-3 py-2 text-left"
      onClick={() => props.onPick(recipient)}
    >
      {recipient.network ? (
        <ProviderLogo id={recipient.network} name={networkNames[recipient.network]} size={28} />
      ) : null}
      <span className="flex flex-col">
        <span className="font-semibold whitespace-nowrap">{props.title}</span>
        {lines.map((line) => (
          <span key={line} className="text-sm whitespace-nowrap text-gray-700">
            {line}
          </span>
        ))}
      </span>
    </button>
  );
}

/**
 * The confirm step's "Save as": the label typed (empty: not saved), and `save`, which keeps the
 * recipient under it once the payment has succeeded.
 */
export function useSaveAs(service: BeneficiaryService) {
  const queries = useQueryClient();
  const saved = useSaved(service).data?.items ?? [];
  const [label, setLabel] = useState('');
  return {
    service,
    label,
    setLabel,
    /** The label this recipient is saved under already, if it is. */
    savedAs: (recipient: string) => saved.find((b) => same(service, b.recipient, recipient))?.label,
    save: async (what: Recipient) => {
      if (label.trim() === '') return;
      try {
        await call('saveBeneficiary', { service, label: label.trim(), ...what });
        await queries.invalidateQueries({ queryKey: savedKey(service) });
      } catch {
        // The payment went through, which is what matters here: a save that failed only means the
        // number is typed again next time, so it does not stand between the person and the receipt.
      }
    },
  };
}

export type SaveAsChoice = ReturnType<typeof useSaveAs>;

/** "Save as" on the confirm step, or where the recipient is saved already, under which name. */
export function SaveAs({ choice, recipient }: { choice: SaveAsChoice; recipient: string }) {
  const savedAs = choice.savedAs(recipient);
  if (savedAs !== undefined) {
    return (
      <p className="text-gray-700">
        Saved as <strong>{savedAs}</strong>
      </p>
    );
  }
  return (
    <Field
      label="Save as (optional)"
      value={choice.label}
      onChange={choice.setLabel}
      maxLength={40}
      autoComplete="off"
      hint={`A name such as Mum, to ${choice.service === 'transfer' ? 'send' : 'pay'} again with one tap`}
    />
  );
}
