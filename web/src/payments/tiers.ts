// The KYC tiers (SPEC.md "KYC tiers", API.md section 7). What each asks for and unlocks is written
// once, in components/kyc-tiers.tsx, for Verify and for the gate before a form alike.

export type Tier = 1 | 2 | 3;
