// The ledger reference of a dispute's refund, one per dispute ever: the wallet history tells a
// dispute refund by it (the disputes module's movementKinds), so it lives apart from the rules of
// disputes.

export const disputePostings = { refund: (disputeId: string) => `dispute:${disputeId}:refund` };
