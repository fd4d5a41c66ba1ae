import { ProviderLogo } from './provider-logo.tsx';

// A provider chosen by its mark and its name (a DisCo, a TV provider, a betting company, an exam),
// as the money apps show them: a person finds Ikeja Electric's tile faster than its line in a list.
// Real radio buttons over each tile, so the keyboard and screen readers work as usual.

export type ProviderOption = { id: string; name: string };

export function ProviderPicker(props: {
  legend: string;
  /** The radio group's name, unique on the page. */
  name: string;
  options: readonly ProviderOption[];
  value: string;
  onChange: (id: string) => void;
}) {
  return (
    <fieldset className="grid grid-cols-2 gap-2">
      <legend className="mb-1 font-medium">{props.legend}</legend>
      {props.options.map((option) => (
        <label
          key={option.id}
          className={`relative flex items-center gap-2 rounded-lg border px-2 py-2 text-sm leading-tight has-[:focus-visible]:outline-3 has-[:focus-visible]:outline-accent ${
            props.value === option.id ? 'border-brand bg-brand-light font-semibold' : 'border-gray-300'
          }`}
        >
          {/* The radio covers its tile, unseen: a tap anywhere on the tile is a tap on it. */}
          <input
            type="radio"
            name={props.name}
            className="absolute inset-0 z-10 h-full w-full cursor-pointer appearance-none opacity-0"
            checked={props.value === option.id}
            onChange={() => props.onChange(option.id)}
          />
          <ProviderLogo id={option.id} name={option.name} />
          {option.name}
        </label>
      ))}
    </fieldset>
  );
}
