import { useId } from 'react';

// A labelled native select: on a phone the system picker is the fastest and most accessible list.

export type Option = { value: string; label: string };

export function Select(props: {
  label: string;
  value: string;
  onChange: (value: string) => void;
  options: readonly Option[];
  /** Shown first with an empty value, until the person picks. */
  placeholder?: string;
  hint?: string | undefined;
}) {
  const id = useId();
  return (
    <div className="flex flex-col gap-1">
      <label htmlFor={id} className="font-medium">
        {props.label}
      </label>
      <select
        id={id}
        className="rounded-lg border border-gray-400 bg-white px-3 py-2 text-lg"
        value={props.value}
        onChange={(event) => props.onChange(event.target.value)}
        aria-describedby={props.hint ? `${id}-hint` : undefined}
      >
        {props.placeholder !== undefined ? (
          <option value="" disabled>
            {props.placeholder}
          </option>
        ) : null}
        {props.options.map((option) => (
          <option key={option.value} value={option.value}>
            {option.label}
          </option>
        ))}
      </select>
      {props.hint ? (
        <p id={`${id}-hint`} className="text-sm text-gray-700">
          {props.hint}
        </p>
      ) : null}
    </div>
  );
}
