// What each KYC tier unlocks (SPEC.md "KYC tiers", API.md section 7), in the words the screens use
// before a form a person cannot use yet.

export type Tier = 1 | 2 | 3;

export const tierUnlocks: Readonly<Record<Tier, { check: string; unlocks: string }>> = {
  1: { check: 'a face check with your phone camera', unlocks: 'buying airtime, data, bills and pins' },
  2: {
    check: 'your NIN (National Identification Number)',
    unlocks: 'sending money to other people and your own bank account number for funding',
  },
  3: { check: 'a bank account and an ID document', unlocks: 'the highest limits' },
};
