// The ledger reference of an approved adjustment, one per adjustment ever: the wallet history tells
// an adjustment by it (the adjustments module's movementKinds), and a second approval racing the
// first meets it, so it lives apart from the rules.

export const adjustmentPostings = { posting: (adjustmentId: string) => `adjustment:${adjustmentId}` };
