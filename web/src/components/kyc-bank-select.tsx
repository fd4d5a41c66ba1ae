import { useQuery } from '@tanstack/react-query';
import { useId, useState } from 'react';
import { type CallError, call } from '../api/client.ts';
import { Select } from './select.tsx';
import { ErrorNote, Waiting } from './ui.tsx';

// The bank of Tier 3's account, picked from the service's list (listBanks, API.md section 16: the
// payment provider's banks), which Tier 3 checks the code against. A native select keeps the phone's
// own picker and a screen reader's list; the search box above narrows it, since the list is long.

/** Lower case without spaces or punctuation, so "gtbank", "GT Bank" and "g.t. bank" agree. */
const folded = (text: string) => text.toLowerCase().replace(/[^a-z0-9]/g, '');

export function BankSelect({ value, onChange }: { value: string; onChange: (code: string) => void }) {
  const searchId = useId();
  const [search, setSearch] = useState('');
  const banks = useQuery({ queryKey: ['banks'], queryFn: () => call('listBanks', {}), staleTime: 3_600_000 });
  const all = banks.data?.items ?? [];
  const wanted = folded(search);
  const shown = all.filter((bank) => bank.code === value || folded(bank.name).includes(wanted));
  const matches = shown.filter((bank) => folded(bank.name).includes(wanted));
  return (
    <div className="flex flex-col gap-1">
      <label htmlFor={searchId} className="font-medium">
        Search for your bank
      </label>
      <input
        id={searchId}
        type="search"
        className="rounded-lg border border-gray-400 px-3 py-2 text-lg"
        value={search}
        autoComplete="off"
        onChange={(event) => {
          const typed = event.target.value;
          setSearch(typed);
          // One bank left: it is the one meant.
          const left = all.filter((bank) => folded(bank.name).includes(folded(typed)));
          if (typed.trim() !== '' && left.length === 1) onChange(left[0]!.code);
        }}
      />
      <Select
        label="Bank"
        value={value}
        onChange={onChange}
        options={shown.map((bank) => ({ value: bank.code, label: bank.name }))}
        placeholder={
          banks.isPending
            ? 'Loading banks…'
            : matches.length === 0
              ? 'No bank by that name'
              : 'Choose your bank'
        }
      />
      {banks.isPending ? <Waiting label="Loading the list of banks" /> : null}
      <ErrorNote error={banks.error as CallError | null} />
    </div>
  );
}
