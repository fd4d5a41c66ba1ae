import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { createFileRoute, Link } from '@tanstack/react-router';
import { type FormEvent, useState } from 'react';
import { type CallError, call, type Input, type Output } from '../../api/client.ts';
import { requireSignIn } from '../../auth-guard.ts';
import { Select } from '../../components/select.tsx';
import { Button, ErrorNote, Field, Screen, Waiting } from '../../components/ui.tsx';
import { formatDateTime, formatNairaNumber, parseNaira } from '../../format.ts';

// Admin: the markup of each VTU service (API.md section 11): a flat amount in naira plus a percentage
// of the wholesale price, for every provider of the service or for one provider (whose own markup
// wins), and for the default prices or one price level (API.md section 16: resellers and the like).
// The markups shown are the stored ones (adminListPriceLevels), resolved by the rule the service
// prices with: the level's own markup for the provider, its markup for every provider, then the
// default's in the same order. A second form puts a user on a level, or back on the default prices.

type Service = Input<'adminSetMarkup'>['service'];
type Provider = NonNullable<Input<'adminSetMarkup'>['provider']>;
type Level = Output<'adminListPriceLevels'>['items'][number];
type StoredMarkup = Level['markups'][number];

const services: ReadonlyArray<{ value: Service; label: string }> = [
  { value: 'airtime', label: 'Airtime' },
  { value: 'data', label: 'Data bundles' },
  { value: 'cable', label: 'Cable TV' },
  { value: 'electricity', label: 'Electricity' },
  { value: 'betting', label: 'Betting wallets' },
  { value: 'education', label: 'Exam PINs' },
  { value: 'airtime_to_cash', label: 'Airtime to cash' },
  { value: 'social', label: 'Social media boosts' },
];

const providers: ReadonlyArray<{ value: Provider; label: string }> = [
  { value: 'data', label: 'Data provider' },
  { value: 'bills', label: 'Bills provider' },
  { value: 'social', label: 'Social provider' },
];

/** The level select's value for "a level not yet made" (level names are lowercase slugs: no clash). */
const NEW_LEVEL = '+new';
/** The service's rule for a level's name (API.md section 16): 1 to 32 lowercase letters, digits, inner hyphens. */
const levelPattern = /^[a-z0-9](?:[a-z0-9-]{0,30}[a-z0-9])?$/;
const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A percentage of 0 to 100 with at most two decimals, or null. */
function parsePercent(text: string): number | null {
  const cleaned = text.replace(/[%\s]/g, '');
  if (!/^\d{1,3}(\.\d{1,2})?$/.test(cleaned)) return null;
  const n = Number(cleaned);
  return n <= 100 ? n : null;
}

const describe = (flat: number, percent: number) =>
  flat === 0 && percent === 0
    ? 'no markup'
    : `${formatNairaNumber(flat)} plus ${percent}% of the wholesale price`;

const levelName = (level: string | null) => (level === null ? 'the default prices' : `the ${level} level`);

/**
 * The stored markup for exactly this level, service and provider, and, when there is none, the one
 * the service falls back to and where it comes from.
 */
function markupInForce(levels: Level[], level: string | null, service: Service, provider: Provider | null) {
  const stored = (at: string | null, through: Provider | null): StoredMarkup | undefined =>
    levels.find((l) => l.level === at)?.markups.find((m) => m.service === service && m.provider === through);
  // The order the service looks in (src/catalogue/pricing.ts markupAmong), after the row itself.
  const fallbacks: Array<[string | null, Provider | null, string]> = [];
  if (level !== null && provider !== null) {
    fallbacks.push([level, null, `the ${level} level's markup for every provider`]);
    fallbacks.push([null, provider, "the default prices' markup for this provider"]);
  }
  if (level !== null || provider !== null)
    fallbacks.push([null, null, "the default prices' markup for every provider"]);
  const fallback = fallbacks
    .map(([at, through, source]) => ({ markup: stored(at, through), source }))
    .find((f) => f.markup !== undefined);
  return { own: stored(level, provider), fallback };
}

function Markups() {
  const queries = useQueryClient();
  const [service, setService] = useState<Service>('airtime');
  const [provider, setProvider] = useState<Provider | ''>('');
  const [levelChoice, setLevelChoice] = useState('');
  const [newLevelText, setNewLevelText] = useState('');
  const [flatText, setFlatText] = useState('');
  const [percentText, setPercentText] = useState('');
  const [saved, setSaved] = useState<Output<'adminSetMarkup'> | null>(null);

  const levels = useQuery({
    queryKey: ['price-levels'],
    queryFn: () => call('adminListPriceLevels', {}),
  });
  const named = (levels.data?.items ?? []).flatMap((l) => (l.level === null ? [] : [l.level]));
  const newLevel = newLevelText.trim();
  const newLevelError =
    levelChoice !== NEW_LEVEL || newLevel === ''
      ? undefined
      : !levelPattern.test(newLevel)
        ? 'Lowercase letters, digits and hyphens, 1 to 32 characters, such as reseller'
        : newLevel === 'default' || named.includes(newLevel)
          ? 'That level exists already: choose it in the list'
          : undefined;
  const level = levelChoice === '' ? null : levelChoice === NEW_LEVEL ? newLevel : levelChoice;

  const flat = flatText.trim() === '' ? undefined : parseNaira(flatText);
  const percent = percentText.trim() === '' ? undefined : parsePercent(percentText);
  const nothing = flat === undefined && percent === undefined;
  const invalid = flat === null || percent === null || level === '' || newLevelError !== undefined;

  const save = useMutation({
    mutationFn: (input: Input<'adminSetMarkup'>) => call('adminSetMarkup', input),
    onSuccess: (stored) => {
      setSaved(stored);
      setFlatText('');
      setPercentText('');
      // A new level is made by its first markup: from now on it is one of the list's.
      if (stored.level !== null) setLevelChoice(stored.level);
      setNewLevelText('');
      void queries.invalidateQueries({ queryKey: ['price-levels'] });
    },
  });

  function submit(event: FormEvent) {
    event.preventDefault();
    if (nothing || invalid) return;
    setSaved(null);
    save.mutate({
      service,
      ...(provider === '' ? {} : { provider }),
      ...(level === null ? {} : { level }),
      ...(flat !== undefined && flat !== null ? { flat } : {}),
      ...(percent !== undefined && percent !== null ? { percent } : {}),
    });
  }

  const serviceLabel = services.find((s) => s.value === service)?.label ?? service;
  const providerLabel = (p: string | null) =>
    p === null ? 'every provider' : (providers.find((x) => x.value === p)?.label ?? p).toLowerCase();
  const current =
    levels.data === undefined || level === ''
      ? undefined
      : markupInForce(levels.data.items, level, service, provider === '' ? null : provider);
  const where = provider === '' ? 'for every provider' : `through the ${providerLabel(provider)}`;
  const atLevel = level === null ? '' : ` at the ${level} level`;

  return (
    <Screen title="Markups">
      <Link to="/admin" className="text-brand underline">
        Back to admin
      </Link>
      <p>
        Customers pay the wholesale price plus the markup: a flat amount in naira plus a percentage of the
        wholesale price. A provider's own markup wins over the one for every provider. A price level (for
        resellers, say) has markups of its own; where it has none, its users pay the default ones.
      </p>
      <form className="flex flex-col gap-4" onSubmit={submit} noValidate>
        <Select
          label="Price level"
          value={levelChoice}
          options={[
            { value: '', label: 'Default prices (everyone without a level)' },
            ...named.map((name) => ({ value: name, label: `Level ${name}` })),
            { value: NEW_LEVEL, label: 'A new level…' },
          ]}
          onChange={(value) => {
            setLevelChoice(value);
            setSaved(null);
          }}
        />
        {levelChoice === NEW_LEVEL ? (
          <Field
            label="New level name"
            value={newLevelText}
            onChange={setNewLevelText}
            autoComplete="off"
            maxLength={32}
            hint="Lowercase letters, digits and hyphens, such as reseller. Its first markup creates it."
            error={newLevelError}
          />
        ) : null}
        <Select
          label="Service"
          value={service}
          options={services}
          onChange={(value) => {
            setService(value as Service);
            setSaved(null);
          }}
        />
        <Select
          label="Provider"
          value={provider}
          options={[
            { value: '', label: 'Every provider of the service' },
            ...providers.map((p) => ({ value: p.value, label: `${p.label} only` })),
          ]}
          onChange={(value) => {
            setProvider(value as Provider | '');
            setSaved(null);
          }}
        />
        <div role="status" aria-live="polite" className="rounded-xl bg-brand-light p-3">
          {levels.isPending ? <Waiting label="Reading the markups" /> : null}
          {current ? (
            <p data-testid="markup-now">
              Now: {serviceLabel} {where}
              {atLevel}{' '}
              {current.own
                ? current.own.flat === 0 && current.own.percent === 0
                  ? 'has no markup'
                  : `has a markup of ${describe(current.own.flat, current.own.percent)}`
                : current.fallback?.markup
                  ? `has no markup of its own: it pays ${current.fallback.source}, ${describe(current.fallback.markup.flat, current.fallback.markup.percent)}`
                  : 'has no markup'}
              .
            </p>
          ) : null}
        </div>
        <ErrorNote error={levels.error as CallError | null} />
        <Field
          label="Flat amount (₦)"
          value={flatText}
          onChange={setFlatText}
          inputMode="decimal"
          hint={
            current?.own
              ? `Now ${formatNairaNumber(current.own.flat)}. Leave empty to keep it.`
              : 'Leave empty for ₦0.'
          }
          error={flat === null ? 'Type an amount such as 20 or 12.50' : undefined}
        />
        <Field
          label="Percentage of the wholesale price (%)"
          value={percentText}
          onChange={setPercentText}
          inputMode="decimal"
          hint={current?.own ? `Now ${current.own.percent}%. Leave empty to keep it.` : 'Leave empty for 0%.'}
          error={percent === null ? 'Type a percentage from 0 to 100, such as 2.5' : undefined}
        />
        <ErrorNote error={save.error as CallError | null} />
        <Button type="submit" busy={save.isPending} disabled={nothing || invalid}>
          Save the markup
        </Button>
      </form>
      <div role="status" aria-live="polite">
        {saved ? (
          <p className="rounded-xl bg-green-100 p-3 text-green-900">
            Saved: {services.find((s) => s.value === saved.service)?.label ?? saved.service},{' '}
            {providerLabel(saved.provider)}
            {saved.level === null ? '' : `, ${saved.level} level`}: {describe(saved.flat, saved.percent)} (at{' '}
            {formatDateTime(saved.updatedAt)}).
          </p>
        ) : null}
      </div>
      <UserLevel levels={levels.data?.items ?? []} />
    </Screen>
  );
}

/** Puts a user on a price level, or back on the default prices; lists the levels and their users. */
function UserLevel({ levels }: { levels: Level[] }) {
  const queries = useQueryClient();
  const [userId, setUserId] = useState('');
  const [choice, setChoice] = useState('');
  const [done, setDone] = useState<Output<'adminSetUserPriceLevel'> | null>(null);
  const id = userId.trim();
  const idError =
    id === '' || uuidPattern.test(id) ? undefined : 'A user id looks like 0192f3c4-…: 36 characters';

  const assign = useMutation({
    mutationFn: (input: Input<'adminSetUserPriceLevel'>) => call('adminSetUserPriceLevel', input),
    onSuccess: (result) => {
      setDone(result);
      setUserId('');
      void queries.invalidateQueries({ queryKey: ['price-levels'] });
    },
  });

  function submit(event: FormEvent) {
    event.preventDefault();
    if (id === '' || idError !== undefined) return;
    setDone(null);
    assign.mutate({ userId: id, level: choice === '' ? null : choice });
  }

  return (
    <section aria-labelledby="user-level-title" className="flex flex-col gap-4">
      <h2 id="user-level-title" className="text-xl font-semibold">
        A user's price level
      </h2>
      <ul className="flex flex-col gap-1" aria-label="Price levels">
        {levels.map((l) => (
          <li key={l.level ?? ''}>
            {l.level === null ? 'Default prices' : `Level ${l.level}`}: {l.users}{' '}
            {l.users === 1 ? 'user' : 'users'}
          </li>
        ))}
      </ul>
      <form className="flex flex-col gap-4" onSubmit={submit} noValidate>
        <Field
          label="User id"
          value={userId}
          onChange={setUserId}
          autoComplete="off"
          hint="The id shown with the user's KYC reviews."
          error={idError}
        />
        <Select
          label="Their prices"
          value={choice}
          options={[
            { value: '', label: 'Default prices (no level)' },
            ...levels.flatMap((l) =>
              l.level === null ? [] : [{ value: l.level, label: `Level ${l.level}` }],
            ),
          ]}
          onChange={(value) => {
            setChoice(value);
            setDone(null);
          }}
        />
        <ErrorNote
          error={assign.error as CallError | null}
          message={
            (assign.error as CallError | null)?.code === 'NOT_FOUND' ? 'No user has this id.' : undefined
          }
        />
        <Button type="submit" busy={assign.isPending} disabled={id === '' || idError !== undefined}>
          Set the user's prices
        </Button>
      </form>
      <div role="status" aria-live="polite">
        {done ? (
          <p className="rounded-xl bg-green-100 p-3 text-green-900">
            Saved: user {done.userId} now pays {levelName(done.level)}.
          </p>
        ) : null}
      </div>
    </section>
  );
}

export const Route = createFileRoute('/admin/markups')({ beforeLoad: requireSignIn, component: Markups });
