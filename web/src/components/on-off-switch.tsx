// The Settings page's on/off switches (push on this phone, USSD): one look and one accessible shape,
// a button with role="switch" named by its section's heading and described by its state line, and
// "On"/"Off" written beside it for sighted people (the switch itself says it through aria-checked).

export function OnOffSwitch(props: {
  on: boolean;
  /** The id of the heading that names what is switched. */
  labelledBy: string;
  /** The id of the line that says the state in words. */
  describedBy: string;
  disabled: boolean;
  busy?: boolean;
  /** Set when switching opens a step under the switch (the PIN to confirm). */
  expanded?: boolean;
  onClick: () => void;
}) {
  const { on } = props;
  return (
    <span className="flex items-center gap-2">
      <span aria-hidden="true">{on ? 'On' : 'Off'}</span>
      <button
        type="button"
        role="switch"
        aria-checked={on}
        aria-labelledby={props.labelledBy}
        aria-describedby={props.describedBy}
        aria-busy={props.busy || undefined}
        aria-expanded={props.expanded}
        disabled={props.disabled}
        onClick={props.onClick}
        className={`flex h-8 w-14 shrink-0 items-center rounded-full p-1 disabled:opacity-60 ${
          on ? 'bg-brand' : 'bg-gray-400'
        }`}
      >
        <span
          aria-hidden="true"
          className={`h-6 w-6 rounded-full bg-white transition-transform ${on ? 'translate-x-6' : ''}`}
        />
      </button>
    </span>
  );
}
