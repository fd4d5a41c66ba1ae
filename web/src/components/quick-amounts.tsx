import { formatNairaNumber } from '../format.ts';

// Amounts one tap away, as the money apps offer them: the amount field stays for any other.

export function QuickAmounts(props: {
  amounts: readonly number[];
  chosen: number | null;
  onChoose: (amount: number) => void;
  label?: string;
}) {
  return (
    <fieldset className="flex flex-wrap gap-2">
      <legend className="sr-only">{props.label ?? 'Quick amounts'}</legend>
      {props.amounts.map((amount) => (
        <button
          key={amount}
          type="button"
          aria-pressed={props.chosen === amount}
          onClick={() => props.onChoose(amount)}
          className={`rounded-full border px-3 py-1 whitespace-nowrap ${
            props.chosen === amount ? 'border-brand bg-brand text-white' : 'border-gray-400 text-gray-900'
          }`}
        >
          {formatNairaNumber(amount).replace(/\.00$/, '')}
        </button>
      ))}
    </fieldset>
  );
}
