// Name matching for KYC. Tier 2 compares the name on the user's NIN record (first, middle and last
// name from the KYC provider, usually in capitals) with the name on the user's profile; tier 3
// compares a bank account name (one string, as the bank returns it) with the profile in the same
// way. The functions here are pure so the rules can be read and tested in one place.
//
// The two possible mistakes do not cost the same. A false match lets one person verify as someone
// else and open or link an account in their name; a false mismatch only sends a real user to a
// human reviewer. Wherever a rule has to guess, it therefore guesses "mismatch".
//
// Normalisation (normaliseName). Both sides are normalised the same way before anything is compared:
// - The text is decomposed with Unicode NFKD, lowercased and stripped of combining marks. Yoruba and
//   Igbo spelling carries tone marks and dots under letters that NIMC and the banks leave out, so
//   "Adébáyọ̀" is "adebayo", "Ọlá" is "ola" and "Ifeọma" is "ifeoma". NFKD also folds compatibility
//   forms such as full-width letters. Hausa's hooked letters (ɓ ɗ ƙ ƴ) have no decomposition, so
//   they are mapped to b, d, k and y by hand: records spell "Ɗanjuma" as "DANJUMA".
// - Apostrophes (' ’ ‘ ʼ ` ´) are removed and the letters either side joined, because an
//   apostrophe marks an elision inside one name, and records drop it: "Yar'Adua", "Yar’Adua" and
//   "YARADUA" are all "yaradua", and "O'Neil" is "oneil".
// - Every other character that is not a letter or a digit (spaces, hyphens and other dashes, dots,
//   commas, brackets) separates tokens, and a run of them counts as one separator, so "Ade-Bayo"
//   gives "ade", "bayo" and "OGUNLESI,  ADEBAYO J." gives "ogunlesi", "adebayo", "j". A hyphen
//   still keeps its parts together as one word for the rules below (a hyphenated first name is
//   the first name, all of it). Digits are kept rather than silently dropped.
// - Titles and honorifics at the start of a name (Mr, Mrs, Miss, Ms, Dr, Chief, Alhaji, Alhaja,
//   Engr, Prof, Pastor, Barr) are dropped, as many as lead it ("Alhaji Dr. Abubakar"), because they
//   are not part of a legal name and profiles and records carry them inconsistently. A title word
//   later in a name is kept: only a recognised prefix may disappear, nothing else.
//
// Matching a profile with a record (matchProfileToRecord, the NIN record):
// - The profile must have a first and a last name that are non-empty after normalisation, and the
//   record a first and a last name; otherwise there is nothing to compare and the answer says which
//   side is missing (the profile is checked first).
// - Case, spacing and the order of names do not matter. Which of the profile's names is found in
//   which of the record's fields is not checked, because providers and users both put names in the
//   wrong fields: a NIN with first name "OGUNLESI" and last name "ADEBAYO" matches the profile
//   Adebayo Ogunlesi. Spacing does not matter within one field: adjacent tokens of a field are
//   also compared joined, so "Ade-Bayo", "Ade Bayo" and "ADEBAYO" all match each other. Tokens of
//   different fields are never joined, and an initial is never joined to its neighbours.
// - Every name the profile gives must be found in the record, each in a different place (a profile
//   "Adebayo Adebayo" needs two Adebayos). The profile's first-name field may hold first and middle
//   names together ("Adebayo John"); its first word is the first name and the rest are middle names.
// - The record's first and last names must all be found in the profile; only its middle names may
//   go unmatched, because the profile may leave them out. So the profile John Ogunlesi does not
//   match the record ADEBAYO JOHN OGUNLESI: he may go by his middle name, but a brother or cousin
//   called John Ogunlesi would look exactly the same, and a reviewer can tell them apart.
// - An initial in the record ("J.") may stand for a middle name the profile gives ("John"), and an
//   initial the profile gives as a middle name may stand for the record's middle name. An initial
//   never stands for a first or last name on either side: "A. OGUNLESI" matches nobody, and nor
//   does the profile A. Ogunlesi.
// - Names are compared for equality after normalisation, never by edit distance. Common Nigerian
//   names differ by one letter ("Chidi" and "Chika", "Ade" and "Ada", "Bello" and "Belo"), so any
//   tolerance would approve different people. Spelling variants of one name ("Muhammad",
//   "Mohammed", "Mohammad") are left to a human reviewer for the same reason: the service cannot
//   know which spellings one person uses, and a table of "equivalent" names would merge people.
//
// Matching a profile with a bank account name (matchProfileToFullName). The bank gives one string
// with no fields, so which words are the first, middle and last names has to be read from their
// positions.
// - With a comma ("OGUNLESI, ADEBAYO J."), what comes before it is the surname, the first word after
//   it the first name and the rest middle names. That one reading is matched as a NIN record is, so
//   the profile's names may sit in any order. Titles are dropped from the start of each part.
// - Without a comma, banks usually put the surname first ("OGUNLESI ADEBAYO JOHN") and some put it
//   last ("ADEBAYO JOHN OGUNLESI"), so both readings are tried: the first word is the surname and
//   the second the first name, or the first word is the first name and the last word the surname.
//   Here the profile's names must also sit in the reading's places: its first name in the first
//   name, its last name in the surname, its middle names among the middle names. Guessing the order
//   and then ignoring it as well would compound the guesses: "OGUNLESI ADEBAYO JOHN" read surname
//   last and swapped would approve a John Ogunlesi, whom the NIN rule above refuses. A two-word name
//   still matches in either order, because its two readings are each other's swap. Adjacent words
//   may be compared joined, as within a NIN field ("ADE BAYO OGUNLESI" is Adebayo Ogunlesi), but
//   never a first name with a last name.
// - A reading that puts an initial in the first or last name's place matches nothing, so
//   "OGUNLESI ADEBAYO J." can only be read surname first.
// - A bank name of fewer than two words cannot show a first and a last name, so it counts as
//   missing.
//
// A name of more than tokensMax tokens on either side is reported as not matching rather than
// searched: no person's name is that long, and the search grows quickly with the number of tokens.

export type PersonName = { firstName: string; middleName?: string | null; lastName: string };

export type NameMatch =
  | { match: true }
  | { match: false; reason: 'profile_name_missing' | 'record_name_missing' | 'names_differ' };

type ProfileName = { firstName: string | null; lastName: string | null };

/** More tokens than this on either side is not a person's name (and bounds the search). */
const tokensMax = 12;

const titles: ReadonlySet<string> = new Set([
  'mr',
  'mrs',
  'miss',
  'ms',
  'dr',
  'chief',
  'alhaji',
  'alhaja',
  'engr',
  'prof',
  'pastor',
  'barr',
]);

// U+00B4 (acute accent) is typed as an apostrophe; NFKD would turn it into a space and a combining
// mark, so it is made a plain apostrophe first.
const acuteAsApostrophe = /\u00b4/gu;
const apostrophes = /['\u2018\u2019\u02bc\u02bb`]/gu;
const combiningMarks = /\p{M}/gu;
const hooked = /[\u0253\u0257\u0199\u01b4]/gu;
const hookedPlain: Readonly<Record<string, string>> = { ɓ: 'b', ɗ: 'd', ƙ: 'k', ƴ: 'y' };
/** Separates words: anything but letters, digits and dashes (dashes join the parts of one word). */
const wordSeparators = /[^\p{L}\p{N}\p{Pd}\u2212]+/u;
const dashes = /[\p{Pd}\u2212]+/u;
/** The comma, and its full-width and small forms (which NFKD would turn into one). */
const commas = /[,\uff0c\ufe50]/u;

/** A name's words, each a list of its hyphen-separated parts, after normalisation and titles. */
function nameWords(raw: string): string[][] {
  const folded = raw
    .replace(acuteAsApostrophe, "'")
    .normalize('NFKD')
    .toLowerCase()
    .replace(apostrophes, '')
    .replace(combiningMarks, '')
    .replace(hooked, (letter) => hookedPlain[letter] ?? letter);
  const words = folded
    .split(wordSeparators)
    .map((word) => word.split(dashes).filter((part) => part.length > 0))
    .filter((parts) => parts.length > 0);
  let start = 0;
  while (start < words.length) {
    const word = words[start]!;
    if (word.length !== 1 || !titles.has(word[0]!)) break;
    start++;
  }
  return words.slice(start);
}

export function normaliseName(raw: string): string[] {
  return nameWords(raw).flat();
}

/** Which of a person's names a token belongs to. */
type Role = 'first' | 'middle' | 'last';

/**
 * A token and the name it belongs to. In a profile, the first word of the first-name field is the
 * first name and its later words middle names. In a record, every token of the first and last
 * names must be matched; middle-name tokens need not be.
 */
type Token = { text: string; role: Role };

/** Adjacent tokens of one field, compared joined. A run is a middle name only if all its tokens are. */
type ProfileRun = { text: string; role: Role; end: number };
/**
 * Adjacent tokens of one record field. `role` is that of the first or last name it covers (a middle
 * name if it covers neither), or null if it would join the first and the last name together.
 */
type RecordRun = { text: string; mask: number; role: Role | null; singleMiddle: boolean };

const isInitial = (text: string) => text.length === 1;

/**
 * Whether every profile token can be given its own run of the record, using every token of the
 * record's first and last names. With `rolesMustAgree`, the profile's first name must be found in
 * the record's first name, its middle names among the middle names and its last name in the last.
 */
function matchesRecord(profile: Token[][], record: Token[][], rolesMustAgree: boolean): boolean {
  const profileCount = profile.reduce((n, segment) => n + segment.length, 0);
  const recordCount = record.reduce((n, segment) => n + segment.length, 0);
  if (profileCount > tokensMax || recordCount > tokensMax) return false;

  const recordRuns: RecordRun[] = [];
  let requiredMask = 0;
  let offset = 0;
  for (const segment of record) {
    for (let start = 0; start < segment.length; start++) {
      const first = segment[start]!;
      if (first.role !== 'middle') requiredMask |= 1 << (offset + start);
      let text = '';
      let mask = 0;
      const roles = new Set<Role>();
      for (let end = start; end < segment.length; end++) {
        const token = segment[end]!;
        // An initial is never joined to its neighbours: "J" + "OHN" is not "john".
        if (end > start && (isInitial(token.text) || isInitial(first.text))) break;
        text += token.text;
        mask |= 1 << (offset + end);
        if (token.role !== 'middle') roles.add(token.role);
        const [role = 'middle', other] = roles;
        recordRuns.push({
          text,
          mask,
          role: other === undefined ? role : null,
          singleMiddle: end === start && token.role === 'middle',
        });
      }
    }
    offset += segment.length;
  }

  const profileRunsAt: ProfileRun[][] = [];
  offset = 0;
  for (const segment of profile) {
    for (let start = 0; start < segment.length; start++) {
      const first = segment[start]!;
      const runs: ProfileRun[] = [];
      let text = '';
      for (let end = start; end < segment.length; end++) {
        const token = segment[end]!;
        if (end > start && (isInitial(token.text) || isInitial(first.text))) break;
        text += token.text;
        // Runs never leave a field, and only the first-name field mixes roles (first, then middle).
        runs.push({ text, role: first.role, end: offset + end + 1 });
      }
      profileRunsAt.push(runs);
    }
    offset += segment.length;
  }

  // Depth-first over the profile's tokens in order. A (position, record tokens used) state that has
  // failed once fails again, so it is remembered; tokensMax keeps the key below 16 * 2^12.
  const failed = new Set<number>();
  const search = (position: number, used: number): boolean => {
    if (position === profileCount) return (used & requiredMask) === requiredMask;
    const key = used * 16 + position;
    if (failed.has(key)) return false;
    for (const profileRun of profileRunsAt[position]!) {
      for (const recordRun of recordRuns) {
        if ((recordRun.mask & used) !== 0 || !compatible(profileRun, recordRun, rolesMustAgree)) continue;
        if (search(profileRun.end, used | recordRun.mask)) return true;
      }
    }
    failed.add(key);
    return false;
  };
  return search(0, 0);
}

function compatible(profile: ProfileRun, record: RecordRun, rolesMustAgree: boolean): boolean {
  if (rolesMustAgree && profile.role !== record.role) return false;
  // An initial on either side may only pair a middle name the profile gives with one middle name
  // of the record, and then only with a name (or initial) that starts with that letter.
  if (isInitial(profile.text)) {
    return profile.role === 'middle' && record.singleMiddle && record.text.startsWith(profile.text);
  }
  if (isInitial(record.text)) {
    return profile.role === 'middle' && record.singleMiddle && profile.text.startsWith(record.text);
  }
  return profile.text === record.text;
}

function profileTokens(profile: ProfileName): Token[][] | null {
  const first = nameWords(profile.firstName ?? '');
  const last = nameWords(profile.lastName ?? '');
  if (first.length === 0 || last.length === 0) return null;
  return [withRoles(first, (index) => (index === 0 ? 'first' : 'middle')), withRoles(last, () => 'last')];
}

/** Tokens of the given words, each with the role of its word (all parts of a hyphenated word share it). */
function withRoles(words: string[][], roleOf: (wordIndex: number) => Role): Token[] {
  return words.flatMap((word, index) => word.map((text) => ({ text, role: roleOf(index) })));
}

const differ: NameMatch = { match: false, reason: 'names_differ' };

export function matchProfileToRecord(profile: ProfileName, record: PersonName): NameMatch {
  const ours = profileTokens(profile);
  if (ours === null) return { match: false, reason: 'profile_name_missing' };
  const first = nameWords(record.firstName);
  const last = nameWords(record.lastName);
  if (first.length === 0 || last.length === 0) return { match: false, reason: 'record_name_missing' };
  const middle = nameWords(record.middleName ?? '');
  const theirs = [
    withRoles(first, () => 'first'),
    withRoles(middle, () => 'middle'),
    withRoles(last, () => 'last'),
  ];
  return matchesRecord(ours, theirs, false) ? { match: true } : differ;
}

/**
 * The ways to read a bank account name (see the header), each with whether the profile's names must
 * agree with the reading's roles; null when the name has fewer than two words.
 */
function bankReadings(fullName: string): { record: Token[][]; rolesMustAgree: boolean }[] | null {
  const parts = fullName
    .split(commas)
    .map(nameWords)
    .filter((words) => words.length > 0);
  const [surname, ...given] = parts;
  if (surname !== undefined && given.length > 0) {
    const record = [
      withRoles(surname, () => 'last'),
      withRoles(given.flat(), (index) => (index === 0 ? 'first' : 'middle')),
    ];
    return [{ record, rolesMustAgree: false }];
  }
  const words = surname ?? [];
  if (words.length < 2) return null;
  const lastIndex = words.length - 1;
  const surnameFirst: Role[] = words.map((_, index) =>
    index === 0 ? 'last' : index === 1 ? 'first' : 'middle',
  );
  const surnameLast: Role[] = words.map((_, index) =>
    index === 0 ? 'first' : index === lastIndex ? 'last' : 'middle',
  );
  return [surnameFirst, surnameLast].map((roles) => ({
    record: [withRoles(words, (index) => roles[index]!)],
    rolesMustAgree: true,
  }));
}

export function matchProfileToFullName(profile: ProfileName, fullName: string): NameMatch {
  const ours = profileTokens(profile);
  if (ours === null) return { match: false, reason: 'profile_name_missing' };
  const readings = bankReadings(fullName);
  if (readings === null) return { match: false, reason: 'record_name_missing' };
  const matched = readings.some(({ record, rolesMustAgree }) => matchesRecord(ours, record, rolesMustAgree));
  return matched ? { match: true } : differ;
}
