import { useState } from 'react';
import { type Network, networkNames, networks } from '../../../src/shared/networks.ts';
import { networkOfPhone } from '../../../src/shared/prefixes.ts';
import { ProviderLogo } from './provider-logo.tsx';

// The network of a mobile number, found from its prefix as it is typed. The person may still pick
// another (numbers move between networks); a pick that disagrees with the prefix is flagged at once,
// with the switch one tap away, rather than refused after the PIN.

export type NetworkChoice = {
  /** The network the purchase will use: the person's pick, else the detected one. */
  network: Network | null;
  /** What the prefix says, when it is a network we sell. */
  detected: Network | null;
  /** The number is on a network we do not sell. */
  unsold: boolean;
  choose: (network: Network | null) => void;
};

export function useNetworkChoice(phone: string, initial?: string): NetworkChoice {
  const [chosen, choose] = useState<Network | null>(
    networks.includes(initial as Network) ? (initial as Network) : null,
  );
  const found = networkOfPhone(phone);
  const detected = found !== null && found !== 'other' ? found : null;
  return { network: chosen ?? detected, detected, unsold: found === 'other', choose };
}

/** The phone field's hint: the network found, or what a number looks like. */
export function phoneHint(choice: NetworkChoice): string {
  if (choice.unsold) return 'This number is on a network we do not sell.';
  return choice.detected !== null ? `${networkNames[choice.detected]} number` : 'Like 0803 123 4567';
}

export function NetworkPicker({ choice }: { choice: NetworkChoice }) {
  const mismatch = choice.network !== null && choice.detected !== null && choice.network !== choice.detected;
  return (
    <div className="flex flex-col gap-2">
      <fieldset className="grid grid-cols-4 gap-2">
        <legend className="mb-1 font-medium">Network</legend>
        {networks.map((n) => (
          <label
            key={n}
            className={`flex flex-col items-center gap-1 rounded-lg border px-1 py-2 text-sm has-[:focus-visible]:outline-3 has-[:focus-visible]:outline-accent ${
              choice.network === n ? 'border-brand bg-brand-light font-semibold' : 'border-gray-300'
            }`}
          >
            <ProviderLogo id={n} name={networkNames[n]} />
            <span className="flex items-center gap-1">
              <input
                type="radio"
                name="network"
                className="sr-only"
                checked={choice.network === n}
                onChange={() => choice.choose(n)}
              />
              {networkNames[n]}
            </span>
          </label>
        ))}
      </fieldset>
      {mismatch ? (
        <div
          role="alert"
          className="flex items-center justify-between gap-2 rounded-lg bg-amber-100 p-3 text-amber-900"
        >
          <p>This looks like {articled(networkNames[choice.detected!])} number.</p>
          <button
            type="button"
            className="rounded-lg border border-amber-500 px-3 py-1 font-semibold whitespace-nowrap"
            onClick={() => choice.choose(choice.detected)}
          >
            Switch to {networkNames[choice.detected!]}
          </button>
        </div>
      ) : null}
    </div>
  );
}

/** "an MTN", "a Glo", "an Airtel", "a 9mobile": the article as the name is spoken. */
const articled = (name: string) => (/^(MTN|Airtel)/.test(name) ? `an ${name}` : `a ${name}`);
