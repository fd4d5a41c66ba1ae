import { useMe } from '../api/queries.ts';

// A frozen account (API.md section 17.4), told where the person would otherwise pay: on home and in
// place of the PIN. They can still sign in, read everything and receive money; nothing leaves the
// wallet until an operator lifts it, which is what support is for.

/** Whether the signed-in person's account is frozen, as getMe last said. */
export function useFrozen(): boolean {
  return useMe().data?.frozen === true;
}

export function FrozenNotice() {
  if (!useFrozen()) return null;
  return (
    <div
      role="status"
      className="flex flex-col gap-1 rounded-lg bg-red-100 p-3 text-red-900"
      data-testid="frozen-notice"
    >
      <p className="font-semibold">Your account is frozen</p>
      <p>
        No payment, purchase or transfer can leave your wallet for now. You can still sign in, see your
        balance and history, and receive money.
      </p>
      <p>Contact billrail support to find out why and to have it lifted.</p>
    </div>
  );
}
