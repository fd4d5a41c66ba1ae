import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  matchProfileToFullName,
  matchProfileToRecord,
  type NameMatch,
  normaliseName,
  type PersonName,
} from '../../src/kyc/names.ts';

// The name rules of src/kyc/names.ts (its header says why each one is there). Examples use real
// Nigerian name shapes; the properties at the end check the rules hold for any names: noise in the
// writing never changes an answer, the right person always matches, and a profile never matches a
// record that lacks one of its names or has only an initial where a first or last name should be.

type Profile = { firstName: string | null; lastName: string | null };

const profile = (firstName: string | null, lastName: string | null): Profile => ({ firstName, lastName });
const nin = (firstName: string, middleName: string | null, lastName: string): PersonName => ({
  firstName,
  middleName,
  lastName,
});

const matches: NameMatch = { match: true };
const differs: NameMatch = { match: false, reason: 'names_differ' };
const profileMissing: NameMatch = { match: false, reason: 'profile_name_missing' };
const recordMissing: NameMatch = { match: false, reason: 'record_name_missing' };

const show = (p: Profile) => `profile ${JSON.stringify(p.firstName)} ${JSON.stringify(p.lastName)}`;
const showRecord = (r: PersonName) =>
  `NIN ${JSON.stringify(r.firstName)} ${JSON.stringify(r.middleName ?? null)} ${JSON.stringify(r.lastName)}`;

function expectRecord(p: Profile, r: PersonName, expected: NameMatch, note = ''): void {
  assert.deepEqual(matchProfileToRecord(p, r), expected, `${show(p)} against ${showRecord(r)} ${note}`);
}

function expectBank(p: Profile, accountName: string, expected: NameMatch): void {
  assert.deepEqual(
    matchProfileToFullName(p, accountName),
    expected,
    `${show(p)} against bank ${JSON.stringify(accountName)}`,
  );
}

describe('normaliseName', () => {
  it('strips Yoruba and Igbo tone marks and dots under letters', () => {
    assert.deepEqual(normaliseName('Adébáyọ̀ Ògúnlésì'), ['adebayo', 'ogunlesi']);
    assert.deepEqual(normaliseName('Olúwaṣeun'), ['oluwaseun']);
    assert.deepEqual(normaliseName('Ọláwálé'), ['olawale']);
    assert.deepEqual(normaliseName('Ọlá'), ['ola']);
    assert.deepEqual(normaliseName('Ifeọma'), ['ifeoma']);
    assert.deepEqual(normaliseName('Chukwúémékà Ọkọnkwọ'), ['chukwuemeka', 'okonkwo']);
  });

  it('gives the same tokens for precomposed (NFC) and decomposed (NFD) input', () => {
    const name = 'Adébáyọ̀ Ọláwálé Ifeọma';
    assert.deepEqual(normaliseName(name.normalize('NFC')), normaliseName(name.normalize('NFD')));
    assert.deepEqual(normaliseName(name.normalize('NFC')), ['adebayo', 'olawale', 'ifeoma']);
  });

  it("folds Hausa's hooked letters, which have no Unicode decomposition", () => {
    assert.deepEqual(normaliseName('Ɗanjuma'), ['danjuma']);
    assert.deepEqual(normaliseName('ɗanjuma Ƙabiru Ɓello Ƴusuf'), ['danjuma', 'kabiru', 'bello', 'yusuf']);
  });

  it('lowercases, trims and treats any run of whitespace as one separator', () => {
    assert.deepEqual(normaliseName('  ADEBAYO   Ogunlesi  '), ['adebayo', 'ogunlesi']);
    assert.deepEqual(normaliseName('\tNkechi\u00a0\u00a0 OKAFOR\n'), ['nkechi', 'okafor']);
    assert.deepEqual(normaliseName('ＡＩＳＨＡ ＢＥＬＬＯ'), ['aisha', 'bello'], 'full-width letters fold');
  });

  it('splits on hyphens, dots and commas', () => {
    assert.deepEqual(normaliseName('Ade-Bayo'), ['ade', 'bayo']);
    assert.deepEqual(normaliseName('Oluwa\u2013Seun'), ['oluwa', 'seun'], 'an en dash is a hyphen too');
    assert.deepEqual(normaliseName('OGUNLESI, ADEBAYO J.'), ['ogunlesi', 'adebayo', 'j']);
    assert.deepEqual(normaliseName('A.B. Bello'), ['a', 'b', 'bello']);
  });

  it('removes apostrophes, joining the letters either side', () => {
    for (const written of [
      "Yar'Adua",
      'Yar’Adua',
      'Yar‘Adua',
      'Yarʼadua',
      'Yar`Adua',
      'Yar´Adua',
      'YARADUA',
    ]) {
      assert.deepEqual(normaliseName(written), ['yaradua'], written);
    }
    assert.deepEqual(normaliseName("O'Neil"), ['oneil']);
    assert.deepEqual(normaliseName('O’NEIL'), ['oneil']);
  });

  it('drops the titles that lead a name, however many, and only those', () => {
    assert.deepEqual(normaliseName('Alhaji Abubakar Sadiq Mohammed'), ['abubakar', 'sadiq', 'mohammed']);
    assert.deepEqual(normaliseName('Chief (Mrs.) Ngozi Okonkwo'), ['ngozi', 'okonkwo']);
    assert.deepEqual(normaliseName('ALHAJA DR. AISHA BELLO'), ['aisha', 'bello']);
    for (const title of [
      'Mr',
      'Mrs',
      'Miss',
      'Ms',
      'Dr',
      'Chief',
      'Alhaji',
      'Alhaja',
      'Engr',
      'Prof',
      'Pastor',
      'Barr',
    ]) {
      assert.deepEqual(normaliseName(`${title}. Tunde Bakare`), ['tunde', 'bakare'], title);
      assert.deepEqual(normaliseName(title.toUpperCase()), [], `${title} alone is no name`);
    }
    // A title word later in the name stays: only a prefix may disappear.
    assert.deepEqual(normaliseName('Tunde Chief Bakare'), ['tunde', 'chief', 'bakare']);
    // A word that merely starts like a title is a name.
    assert.deepEqual(normaliseName('Mrsa Drew'), ['mrsa', 'drew']);
  });

  it('gives no tokens for empty or punctuation-only input', () => {
    assert.deepEqual(normaliseName(''), []);
    assert.deepEqual(normaliseName('   '), []);
    assert.deepEqual(normaliseName(" - . , ' "), []);
  });
});

describe('matchProfileToRecord (tier 2, the NIN record)', () => {
  it('matches Yoruba names written with or without tone marks', () => {
    expectRecord(profile('Adebayo', 'Ogunlesi'), nin('ADEBAYO', null, 'OGUNLESI'), matches);
    expectRecord(profile('Adébáyọ̀', 'Ògúnlésì'), nin('ADEBAYO', null, 'OGUNLESI'), matches);
    expectRecord(profile('Olúwaṣeun', 'Ọláwálé'), nin('OLUWASEUN', 'ADEBOLA', 'OLAWALE'), matches);
    expectRecord(profile('Oluwaseun', 'Olawale'), nin('Olúwaṣeun', null, 'Ọláwálé'), matches);
  });

  it('matches Igbo names, with a middle name only the record carries', () => {
    expectRecord(profile('Chukwuemeka', 'Okonkwo'), nin('CHUKWUEMEKA', 'IFEANYI', 'OKONKWO'), matches);
    expectRecord(profile('Ifeọma', 'Nwosu'), nin('IFEOMA', 'NKECHI', 'NWOSU'), matches);
    expectRecord(profile('Ifeoma Nkechi', 'Nwosu'), nin('IFEOMA', 'NKECHI', 'NWOSU'), matches);
  });

  it('matches Hausa and Fulani names', () => {
    expectRecord(profile('Abubakar', 'Mohammed'), nin('ABUBAKAR', 'SADIQ', 'MOHAMMED'), matches);
    expectRecord(profile('Abubakar Sadiq', 'Mohammed'), nin('ABUBAKAR', 'SADIQ', 'MOHAMMED'), matches);
    expectRecord(profile('Aisha', 'Bello'), nin('AISHA', null, 'BELLO'), matches);
    expectRecord(profile('Ɗanjuma', 'Musa'), nin('DANJUMA', null, 'MUSA'), matches);
  });

  it('ignores the order of the first and last names (providers swap them)', () => {
    expectRecord(profile('Adebayo', 'Ogunlesi'), nin('OGUNLESI', null, 'ADEBAYO'), matches);
    expectRecord(profile('Adebayo', 'Ogunlesi'), nin('OGUNLESI', 'JOHN', 'ADEBAYO'), matches);
    expectRecord(profile('Ogunlesi', 'Adebayo'), nin('ADEBAYO', 'JOHN', 'OGUNLESI'), matches);
    // First and middle names in the profile's first-name field, in the other order: the same names.
    expectRecord(profile('John Adebayo', 'Ogunlesi'), nin('ADEBAYO', 'JOHN', 'OGUNLESI'), matches);
  });

  it('ignores case, spacing and titles', () => {
    expectRecord(profile('  aDEBAYO ', '\togunlesi  '), nin('ADEBAYO', null, 'OGUNLESI'), matches);
    expectRecord(profile('Adebayo   John', 'Ogunlesi'), nin('ADEBAYO', 'JOHN', 'OGUNLESI'), matches);
    expectRecord(profile('Alhaji Abubakar', 'Mohammed'), nin('ABUBAKAR', 'SADIQ', 'MOHAMMED'), matches);
    expectRecord(profile('Chief Mrs Ngozi', 'Okonkwo'), nin('NGOZI', 'ADAEZE', 'OKONKWO'), matches);
    expectRecord(profile('Ngozi', 'Okonkwo'), nin('MRS NGOZI', null, 'OKONKWO'), matches);
  });

  it('matches compound names whether hyphenated, spaced or written as one word', () => {
    for (const recordFirst of ['ADEBAYO', 'ADE BAYO', 'ADE-BAYO', 'Ade - Bayo']) {
      expectRecord(profile('Ade-Bayo', 'Ogunlesi'), nin(recordFirst, null, 'OGUNLESI'), matches);
      expectRecord(profile('Adebayo', 'Ogunlesi'), nin(recordFirst, null, 'OGUNLESI'), matches);
      expectRecord(profile('Ade Bayo', 'Ogunlesi'), nin(recordFirst, null, 'OGUNLESI'), matches);
    }
    expectRecord(profile('Oluwa-Seun', 'Bakare'), nin('OLUWASEUN', null, 'BAKARE'), matches);
    expectRecord(profile('Chioma', 'Nwankwo-Eze'), nin('CHIOMA', null, 'NWANKWO EZE'), matches);
    expectRecord(profile('Chioma', 'Nwankwoeze'), nin('CHIOMA', null, 'NWANKWO-EZE'), matches);
  });

  it('matches surnames with apostrophes, however the apostrophe is written or dropped', () => {
    for (const recordLast of ["YAR'ADUA", 'YAR’ADUA', 'YARADUA']) {
      expectRecord(profile('Umaru', "Yar'Adua"), nin('UMARU', 'MUSA', recordLast), matches);
      expectRecord(profile('Umaru', 'Yar’adua'), nin('UMARU', 'MUSA', recordLast), matches);
    }
    expectRecord(profile('Shehu', 'ONeil'), nin('SHEHU', null, "O'NEIL"), matches);
  });

  it('lets an initial in the record stand for a middle name the profile gives', () => {
    expectRecord(profile('Adebayo John', 'Ogunlesi'), nin('ADEBAYO', 'J.', 'OGUNLESI'), matches);
    expectRecord(profile('Adebayo', 'Ogunlesi'), nin('ADEBAYO', 'J.', 'OGUNLESI'), matches);
    expectRecord(profile('Adebayo J.', 'Ogunlesi'), nin('ADEBAYO', 'JOHN', 'OGUNLESI'), matches);
    expectRecord(profile('Adebayo J', 'Ogunlesi'), nin('ADEBAYO', 'J', 'OGUNLESI'), matches);
    expectRecord(profile('Abubakar Oluwa-Seun', 'Bello'), nin('ABUBAKAR', 'O.', 'BELLO'), matches);
    // Two middle names, two initials, matched one to one.
    expectRecord(profile('Adebayo John Tunde', 'Ogunlesi'), nin('ADEBAYO', 'T. J.', 'OGUNLESI'), matches);
  });

  it('refuses a record with a different surname', () => {
    expectRecord(profile('Adebayo', 'Ogunlesi'), nin('ADEBAYO', null, 'OGUNDIPE'), differs);
    expectRecord(profile('Aisha', 'Bello'), nin('AISHA', null, 'BALOGUN'), differs);
  });

  it('refuses a record that shares only one name with the profile', () => {
    expectRecord(profile('Chukwuemeka', 'Okonkwo'), nin('CHUKWUEMEKA', null, 'EZE'), differs);
    expectRecord(profile('Chukwuemeka', 'Okonkwo'), nin('EMEKA', null, 'OKONKWO'), differs);
    expectRecord(profile('Nkechi', 'Okafor'), nin('NKECHI', 'OKAFOR', 'UDEH'), differs);
  });

  it('refuses another person with the same first name, and relatives sharing a surname', () => {
    // The holder is Adebayo John Ogunlesi; John Ogunlesi may be him by his middle name, or his brother.
    expectRecord(profile('John', 'Ogunlesi'), nin('ADEBAYO', 'JOHN', 'OGUNLESI'), differs);
    expectRecord(profile('Tunde', 'Ogunlesi'), nin('ADEBAYO', 'JOHN', 'OGUNLESI'), differs);
    expectRecord(profile('Abubakar', 'Bello'), nin('ABUBAKAR', 'SADIQ', 'MOHAMMED'), differs);
  });

  it('refuses a middle name the record lacks or spells differently', () => {
    expectRecord(profile('Adebayo John', 'Ogunlesi'), nin('ADEBAYO', null, 'OGUNLESI'), differs);
    expectRecord(profile('Adebayo John', 'Ogunlesi'), nin('ADEBAYO', 'TUNDE', 'OGUNLESI'), differs);
    expectRecord(profile('Adebayo John', 'Ogunlesi'), nin('ADEBAYO', 'T.', 'OGUNLESI'), differs);
  });

  it('needs every word of the record first and last names', () => {
    expectRecord(profile('Abubakar', 'Mohammed'), nin('ABUBAKAR SADIQ', null, 'MOHAMMED'), differs);
    expectRecord(profile('Abubakar Sadiq', 'Mohammed'), nin('ABUBAKAR SADIQ', null, 'MOHAMMED'), matches);
    expectRecord(profile('Chioma', 'Nwankwo'), nin('CHIOMA', null, 'NWANKWO-EZE'), differs);
  });

  it('needs a name for each of the profile names, not one name twice', () => {
    expectRecord(profile('Adebayo', 'Adebayo'), nin('ADEBAYO', null, 'OGUNLESI'), differs);
    expectRecord(profile('Musa', 'Musa'), nin('MUSA', 'IBRAHIM', 'MUSA'), matches);
  });

  it('never lets an initial stand for a first or last name', () => {
    expectRecord(profile('Adebayo', 'Ogunlesi'), nin('A.', null, 'OGUNLESI'), differs);
    expectRecord(profile('Adebayo', 'Ogunlesi'), nin('A', 'JOHN', 'OGUNLESI'), differs);
    expectRecord(profile('Adebayo', 'Ogunlesi'), nin('ADEBAYO', null, 'O.'), differs);
    expectRecord(profile('A.', 'Ogunlesi'), nin('ADEBAYO', null, 'OGUNLESI'), differs);
    expectRecord(profile('A.', 'Ogunlesi'), nin('A.', null, 'OGUNLESI'), differs);
    expectRecord(profile('Adebayo', 'O'), nin('ADEBAYO', null, 'OGUNLESI'), differs);
    // The record's initial cannot stand for the profile's first name, even where the record has a
    // middle name in that place.
    expectRecord(profile('John', 'Ogunlesi'), nin('ADEBAYO', 'J.', 'OGUNLESI'), differs);
    // A first-name field "J. Adebayo" gives J as the first name, which no initial may match.
    expectRecord(profile('J. Adebayo', 'Ogunlesi'), nin('JOHN', 'ADEBAYO', 'OGUNLESI'), differs);
    // A hyphenated first name is all first name, so no initial stands for a part of it; a second
    // word in the first-name field is a middle name, which an initial may stand for.
    expectRecord(profile('Ade-Bayo', 'Ogunlesi'), nin('ADE', 'B.', 'OGUNLESI'), differs);
    expectRecord(profile('Ade Bayo', 'Ogunlesi'), nin('ADE', 'B.', 'OGUNLESI'), matches);
    // Nor is an initial glued to its neighbour to make a name.
    expectRecord(profile('Shehu', 'Oneil'), nin('SHEHU', null, 'O NEIL'), differs);
  });

  it('treats one-letter differences as different names (no edit distance)', () => {
    expectRecord(profile('Chidi', 'Okeke'), nin('CHIKA', null, 'OKEKE'), differs);
    expectRecord(profile('Ade', 'Bello'), nin('ADA', null, 'BELLO'), differs);
    expectRecord(profile('Aisha', 'Bello'), nin('AISHA', null, 'BELO'), differs);
    expectRecord(profile('Ifeoma', 'Nwosu'), nin('IFEOMA', null, 'NWOSUU'), differs);
    // A prefix is not the name either.
    expectRecord(profile('Ade', 'Ogunlesi'), nin('ADEBAYO', null, 'OGUNLESI'), differs);
    expectRecord(profile('Emeka', 'Okonkwo'), nin('CHUKWUEMEKA', null, 'OKONKWO'), differs);
  });

  it('leaves spelling variants such as Muhammad and Mohammed to a human', () => {
    expectRecord(profile('Muhammad', 'Bello'), nin('MOHAMMED', null, 'BELLO'), differs);
    expectRecord(profile('Abubakar', 'Muhammad'), nin('ABUBAKAR', 'SADIQ', 'MOHAMMED'), differs);
    expectRecord(profile('Abubakar', 'Mohammad'), nin('ABUBAKAR', 'SADIQ', 'MOHAMMED'), differs);
    expectRecord(profile('Aishat', 'Bello'), nin('AISHA', null, 'BELLO'), differs);
  });

  it('says the profile name is missing when either profile name is empty', () => {
    const record = nin('ADEBAYO', null, 'OGUNLESI');
    expectRecord(profile(null, 'Ogunlesi'), record, profileMissing);
    expectRecord(profile('Adebayo', null), record, profileMissing);
    expectRecord(profile(null, null), record, profileMissing);
    expectRecord(profile('', 'Ogunlesi'), record, profileMissing);
    expectRecord(profile('Adebayo', '   '), record, profileMissing);
    expectRecord(profile('Adebayo', ' - . '), record, profileMissing);
    expectRecord(profile('Chief', 'Ogunlesi'), record, profileMissing);
    // The profile is checked first.
    expectRecord(profile(null, 'Ogunlesi'), nin('', null, ''), profileMissing);
  });

  it('says the record name is missing when its first or last name is empty', () => {
    expectRecord(profile('Adebayo', 'Ogunlesi'), nin('', 'JOHN', 'OGUNLESI'), recordMissing);
    expectRecord(profile('Adebayo', 'Ogunlesi'), nin('ADEBAYO', 'JOHN', '  '), recordMissing);
    expectRecord(
      profile('Adebayo', 'Ogunlesi'),
      { firstName: 'ADEBAYO OGUNLESI', lastName: '' },
      recordMissing,
    );
  });

  it('accepts a record without a middleName property', () => {
    expectRecord(profile('Aisha', 'Bello'), { firstName: 'AISHA', lastName: 'BELLO' }, matches);
  });

  it('refuses names with more tokens than any person has, without searching them', () => {
    const many = Array.from({ length: 13 }, () => 'ade').join(' ');
    expectRecord(profile('Ade', 'Ade'), nin('ADE', many, 'ADE'), differs);
    expectRecord(profile(many, 'Ade'), nin('ADE', many, 'ADE'), differs);
    const ten = Array.from({ length: 10 }, () => 'ADE').join(' ');
    expectRecord(profile('Ade', 'Ade'), nin('ADE', ten, 'ADE'), matches, 'twelve tokens are searched');
  });
});

describe('matchProfileToFullName (tier 3, the bank account name)', () => {
  const adebayo = profile('Adebayo', 'Ogunlesi');

  it('matches SURNAME FIRST MIDDLE, the usual bank format', () => {
    expectBank(adebayo, 'OGUNLESI ADEBAYO', matches);
    expectBank(adebayo, 'OGUNLESI ADEBAYO JOHN', matches);
    expectBank(profile('Adebayo John', 'Ogunlesi'), 'OGUNLESI ADEBAYO JOHN', matches);
    expectBank(profile('Chukwuemeka', 'Okonkwo'), 'OKONKWO CHUKWUEMEKA IFEANYI', matches);
    expectBank(profile('Abubakar Sadiq', 'Mohammed'), 'MOHAMMED ABUBAKAR SADIQ', matches);
  });

  it('matches SURNAME, FIRST MIDDLE', () => {
    expectBank(adebayo, 'OGUNLESI, ADEBAYO', matches);
    expectBank(adebayo, 'OGUNLESI, ADEBAYO JOHN', matches);
    expectBank(adebayo, 'OGUNLESI,ADEBAYO J.', matches);
    expectBank(profile('Adebayo John', 'Ogunlesi'), 'OGUNLESI, ADEBAYO J.', matches);
    // The comma fixes the surname, so the profile's first and last names may be either way round.
    expectBank(profile('Ogunlesi', 'Adebayo'), 'OGUNLESI, ADEBAYO JOHN', matches);
  });

  it('matches SURNAME FIRST M.', () => {
    expectBank(adebayo, 'OGUNLESI ADEBAYO J.', matches);
    expectBank(adebayo, 'OGUNLESI ADEBAYO J', matches);
    expectBank(profile('Adebayo John', 'Ogunlesi'), 'OGUNLESI ADEBAYO J.', matches);
    expectBank(profile('Adebayo John', 'Ogunlesi'), 'OGUNLESI ADEBAYO T.', differs);
    expectBank(profile('Adebayo Tunde', 'Ogunlesi'), 'OGUNLESI ADEBAYO J', differs);
  });

  it('matches FIRST MIDDLE SURNAME, which some banks use', () => {
    expectBank(adebayo, 'ADEBAYO OGUNLESI', matches);
    expectBank(adebayo, 'ADEBAYO JOHN OGUNLESI', matches);
    expectBank(adebayo, 'ADEBAYO J. OGUNLESI', matches);
    expectBank(profile('Adebayo John', 'Ogunlesi'), 'ADEBAYO JOHN OGUNLESI', matches);
    expectBank(profile('Aisha', 'Bello'), 'AISHA HAUWA BELLO', matches);
  });

  it('matches a two-word name in either order, whichever way the profile has it', () => {
    for (const accountName of ['OGUNLESI ADEBAYO', 'ADEBAYO OGUNLESI']) {
      expectBank(profile('Adebayo', 'Ogunlesi'), accountName, matches);
      expectBank(profile('Ogunlesi', 'Adebayo'), accountName, matches);
    }
  });

  it('ignores tone marks, case, spacing, titles and apostrophes', () => {
    expectBank(profile('Adébáyọ̀', 'Ògúnlésì'), 'OGUNLESI ADEBAYO', matches);
    expectBank(profile('Olúwaṣeun', 'Ọláwálé'), '  OLAWALE   OLUWASEUN  ', matches);
    expectBank(profile('Ifeọma', 'Nwosu'), 'nwosu ifeoma nkechi', matches);
    expectBank(profile('Aisha', 'Bello'), 'ALHAJA AISHA BELLO', matches);
    expectBank(profile('Ngozi', 'Okonkwo'), 'MRS OKONKWO NGOZI ADAEZE', matches);
    expectBank(profile('Ngozi', 'Okonkwo'), 'OKONKWO, MRS NGOZI', matches);
    expectBank(profile('Umaru', "Yar'Adua"), 'YARADUA UMARU MUSA', matches);
    expectBank(profile('Umaru', 'Yaradua'), "YAR'ADUA, UMARU MUSA", matches);
  });

  it('matches compound names hyphenated, spaced or joined', () => {
    expectBank(profile('Ade-Bayo', 'Ogunlesi'), 'OGUNLESI ADEBAYO JOHN', matches);
    expectBank(profile('Ade-Bayo', 'Ogunlesi'), 'ADE BAYO OGUNLESI', matches);
    expectBank(profile('Adebayo', 'Ogunlesi'), 'OGUNLESI ADE-BAYO JOHN', matches);
    expectBank(profile('Oluwa-Seun', 'Bakare'), 'BAKARE OLUWASEUN', matches);
    expectBank(profile('Oluwaseun', 'Bakare'), 'BAKARE, OLUWA SEUN', matches);
  });

  it('refuses a profile that fits no reading of the name', () => {
    // First and middle, no surname: John is a middle name in the first reading and Ogunlesi a
    // first name in the second.
    expectBank(profile('Adebayo', 'John'), 'OGUNLESI ADEBAYO JOHN', differs);
    // Goes by the middle name, or is a relative: refused as the NIN rule refuses it.
    expectBank(profile('John', 'Ogunlesi'), 'OGUNLESI ADEBAYO JOHN', differs);
    expectBank(profile('John', 'Ogunlesi'), 'OGUNLESI, ADEBAYO JOHN', differs);
    expectBank(profile('John', 'Ogunlesi'), 'ADEBAYO JOHN OGUNLESI', differs);
  });

  it('refuses a different surname, or only one matching name', () => {
    expectBank(adebayo, 'OGUNDIPE ADEBAYO', differs);
    expectBank(adebayo, 'OGUNDIPE ADEBAYO JOHN', differs);
    expectBank(profile('Chukwuemeka', 'Eze'), 'OKONKWO CHUKWUEMEKA', differs);
    expectBank(profile('Aisha', 'Bello'), 'BELLO HAUWA', differs);
    expectBank(profile('Aisha', 'Bello'), 'BELLO, HAUWA AISHA', differs);
  });

  it('never lets an initial stand for a first or last name', () => {
    expectBank(adebayo, 'OGUNLESI A.', differs);
    expectBank(adebayo, 'A. OGUNLESI', differs);
    expectBank(adebayo, 'OGUNLESI, A.', differs);
    expectBank(adebayo, 'OGUNLESI, A. JOHN', differs);
    expectBank(adebayo, 'O. ADEBAYO', differs);
    expectBank(adebayo, 'ADEBAYO J. O.', differs);
    expectBank(profile('A.', 'Ogunlesi'), 'OGUNLESI A.', differs);
    expectBank(profile('John', 'Ogunlesi'), 'OGUNLESI J. ADEBAYO', differs);
  });

  it('treats one-letter differences and spelling variants as different names', () => {
    expectBank(profile('Chidi', 'Okeke'), 'OKEKE CHIKA', differs);
    expectBank(profile('Ade', 'Bello'), 'BELLO ADA', differs);
    expectBank(profile('Muhammad', 'Bello'), 'BELLO MOHAMMED', differs);
    expectBank(profile('Mohammed', 'Bello'), 'BELLO, MUHAMMAD', differs);
  });

  it('says which name is missing', () => {
    expectBank(profile(null, 'Ogunlesi'), 'OGUNLESI ADEBAYO', profileMissing);
    expectBank(profile('Adebayo', ''), 'OGUNLESI ADEBAYO', profileMissing);
    expectBank(profile(null, null), '', profileMissing);
    for (const accountName of ['', '   ', 'OGUNLESI', 'MR OGUNLESI', 'OGUNLESI,', ', , .', 'CHIEF']) {
      expectBank(adebayo, accountName, recordMissing);
    }
  });
});

// Properties. Names come from a pool of real names (so profiles and records share names often)
// and from random lowercase strings; none is a title, and none is one letter (initials are added
// on purpose where a property is about them).

const titles = [
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
];
const pool = [
  'adebayo',
  'ogunlesi',
  'oluwaseun',
  'olawale',
  'chukwuemeka',
  'okonkwo',
  'ifeoma',
  'nkechi',
  'abubakar',
  'sadiq',
  'mohammed',
  'muhammad',
  'aisha',
  'bello',
  'chidi',
  'chika',
  'ade',
  'ada',
  'musa',
  'ibrahim',
  'john',
];
const poolName = fc.constantFrom(...pool);
// A few names, two of which join into a third, and initials: profiles drawn from these match the
// records drawn from them often enough for an invariance to say something about matches too.
const fewNames = fc.constantFrom('ade', 'bayo', 'adebayo', 'ada', 'musa', 'john', 'j', 'a');

/** A profile (first-name field words, last name) drawn mostly from the given names, so it often matches. */
function profileFrom(names: string[]) {
  const name = fc.oneof(
    { arbitrary: fc.constantFrom(...names), weight: 3 },
    { arbitrary: fewNames, weight: 1 },
  );
  return fc.record({ first: fc.array(name, { minLength: 1, maxLength: 3 }), last: name });
}
const anyName = fc.oneof(
  poolName,
  fc.stringMatching(/^[a-z]{2,9}$/).filter((name) => !titles.includes(name)),
);

/** How a name is written: case, spacing and tone marks, none of which may change an answer. */
type Writing = { upper: boolean[]; marks: string[]; gaps: string[]; composed: boolean };
const writing: fc.Arbitrary<Writing> = fc.record({
  upper: fc.array(fc.boolean(), { minLength: 1, maxLength: 16 }),
  marks: fc.array(fc.constantFrom('', '', '\u0300', '\u0301', '\u0323', '\u0323\u0300', '\u0304'), {
    minLength: 1,
    maxLength: 16,
  }),
  gaps: fc.array(fc.constantFrom(' ', '  ', '\t', '\u00a0', ' \n '), { minLength: 1, maxLength: 8 }),
  composed: fc.boolean(),
});

const cycle = <T>(items: T[], index: number): T => items[index % items.length]!;

function written(names: string[], how: Writing): string {
  let letter = 0;
  const words = names.map((name) =>
    [...name]
      .map((char) => {
        const index = letter++;
        return (cycle(how.upper, index) ? char.toUpperCase() : char) + cycle(how.marks, index);
      })
      .join(''),
  );
  const text = cycle(how.gaps, 0) + words.map((word, i) => word + cycle(how.gaps, i + 1)).join('');
  return how.composed ? text.normalize('NFC') : text;
}

const initial = (name: string) => `${name[0]!.toUpperCase()}.`;

/** A person: a first name, perhaps a middle name, and a last name. */
const person = fc.record({
  first: anyName,
  middle: fc.option(anyName, { nil: null }),
  last: anyName,
});

const runs = { numRuns: 300 };

describe('name matching properties', () => {
  it('normaliseName ignores case, spacing and tone marks', () => {
    fc.assert(
      fc.property(fc.array(anyName, { minLength: 1, maxLength: 5 }), writing, (names, how) => {
        assert.deepEqual(normaliseName(written(names, how)), names);
      }),
      runs,
    );
  });

  it('a NIN answer does not change with case, spacing, tone marks or the order of first and last', () => {
    let matched = 0;
    fc.assert(
      fc.property(
        fc
          .record({ first: fewNames, middle: fc.option(fewNames, { nil: null }), last: fewNames })
          .chain((record) =>
            fc.tuple(
              fc.constant(record),
              profileFrom([record.first, record.last, ...(record.middle === null ? [] : [record.middle])]),
            ),
          ),
        writing,
        writing,
        ([record, { first: profileFirst, last: profileLast }], howProfile, howRecord) => {
          const plain = matchProfileToRecord(
            profile(profileFirst.join(' '), profileLast),
            nin(record.first, record.middle, record.last),
          );
          if (plain.match) matched++;
          const noisy = matchProfileToRecord(
            profile(written(profileFirst, howProfile), written([profileLast], howProfile)),
            nin(
              written([record.last], howRecord),
              record.middle === null ? null : written([record.middle], howRecord),
              written([record.first], howRecord),
            ),
          );
          assert.deepEqual(noisy, plain);
        },
      ),
      { numRuns: 2000 },
    );
    assert.ok(matched > 0, 'some generated profiles match their records');
  });

  it('a bank answer does not change with case, spacing, tone marks or spaces around a comma', () => {
    let matched = 0;
    fc.assert(
      fc.property(
        fc
          .array(fewNames, { minLength: 2, maxLength: 4 })
          .chain((words) => fc.tuple(fc.constant(words), profileFrom(words))),
        writing,
        writing,
        ([words, { first: profileFirst, last: profileLast }], howProfile, howRecord) => {
          const p = profile(profileFirst.join(' '), profileLast);
          const noisyProfile = profile(written(profileFirst, howProfile), written([profileLast], howProfile));
          if (matchProfileToFullName(p, words.join(' ')).match) matched++;
          assert.deepEqual(
            matchProfileToFullName(noisyProfile, written(words, howRecord)),
            matchProfileToFullName(p, words.join(' ')),
          );
          const [surname, ...given] = words;
          assert.deepEqual(
            matchProfileToFullName(
              noisyProfile,
              `${written([surname!], howRecord)},${written(given, howRecord)}`,
            ),
            matchProfileToFullName(p, `${surname}, ${given.join(' ')}`),
          );
          if (words.length === 2) {
            assert.deepEqual(
              matchProfileToFullName(p, [...words].reverse().join(' ')),
              matchProfileToFullName(p, words.join(' ')),
            );
          }
        },
      ),
      { numRuns: 1000 },
    );
    assert.ok(matched > 0, 'some generated profiles match their account names');
  });

  it('the person on the record always matches, in every format, with or without the middle name', () => {
    fc.assert(
      fc.property(person, writing, fc.boolean(), (r, how, giveMiddle) => {
        const firstField = giveMiddle && r.middle !== null ? [r.first, r.middle] : [r.first];
        const p = profile(written(firstField, how), written([r.last], how));
        const middle = r.middle === null ? [] : [r.middle];
        expectRecord(p, nin(r.first, r.middle, r.last), matches);
        expectRecord(p, nin(r.last, r.middle, r.first), matches);
        expectBank(p, [r.last, r.first, ...middle].join(' ').toUpperCase(), matches);
        expectBank(p, `${r.last}, ${[r.first, ...middle].join(' ')}`.toUpperCase(), matches);
        expectBank(p, [r.first, ...middle, r.last].join(' ').toUpperCase(), matches);
        if (r.middle !== null) {
          expectRecord(p, nin(r.first, initial(r.middle), r.last), matches);
          expectBank(p, `${r.last} ${r.first} ${initial(r.middle)}`.toUpperCase(), matches);
          expectBank(p, `${r.last}, ${r.first} ${initial(r.middle)}`.toUpperCase(), matches);
          expectBank(p, `${r.first} ${initial(r.middle)} ${r.last}`.toUpperCase(), matches);
        }
      }),
      runs,
    );
  });

  it('a profile never matches a record that lacks one of its names', () => {
    // The record's names use only the letters a to m; one of the profile's names has a letter from
    // u to z (as a one-letter change, or an added letter), so no part of the record can be it. No
    // title is made of those letters, so the changed name is never dropped as a title either.
    const low = fc.stringMatching(/^[a-m]{2,8}$/).filter((name) => !titles.includes(name));
    const foreign = fc.constantFrom('u', 'v', 'w', 'x', 'y', 'z');
    fc.assert(
      fc.property(
        fc.record({ first: low, middle: fc.option(low, { nil: null }), last: low }),
        fc.option(low, { nil: null }),
        fc.constantFrom('first', 'middle', 'last'),
        foreign,
        fc.nat(),
        fc.boolean(),
        (r, extraMiddle, which, letter, at, replace) => {
          const change = (name: string) => {
            const i = at % name.length;
            return name.slice(0, i) + letter + name.slice(replace ? i + 1 : i);
          };
          const middle = r.middle ?? r.first;
          const profileFirst =
            which === 'first'
              ? change(r.first)
              : which === 'middle'
                ? `${r.first} ${change(middle)}`
                : r.first;
          const p = profile(profileFirst, which === 'last' ? change(r.last) : r.last);
          const recordMiddle = [r.middle, extraMiddle].filter((name) => name !== null).join(' ') || null;
          const given = [r.first, ...(recordMiddle === null ? [] : [recordMiddle])].join(' ');
          for (const result of [
            matchProfileToRecord(p, nin(r.first, recordMiddle, r.last)),
            matchProfileToRecord(p, nin(r.last, recordMiddle, r.first)),
            matchProfileToFullName(p, `${r.last} ${given}`),
            matchProfileToFullName(p, `${r.last}, ${given}`),
            matchProfileToFullName(p, `${given} ${r.last}`),
          ]) {
            assert.deepEqual(result, differs, `${show(p)} against ${JSON.stringify(r)}`);
          }
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('an initial never stands for a first or last name, nor a middle name for the first name', () => {
    fc.assert(
      fc.property(fc.uniqueArray(poolName, { minLength: 3, maxLength: 3 }), ([first, middle, last]) => {
        const p = profile(first!, last!);
        // The record has an initial where the first or the last name should be.
        for (const [f, l] of [
          [initial(first!), last!],
          [first!, initial(last!)],
        ] as const) {
          expectRecord(p, nin(f, middle!, l), differs);
          expectBank(p, `${l} ${f} ${middle}`, differs);
          expectBank(p, `${l}, ${f} ${middle}`, differs);
          expectBank(p, `${f} ${middle} ${l}`, differs);
        }
        // The profile has an initial for its first or last name.
        expectRecord(profile(initial(first!), last!), nin(first!, middle!, last!), differs);
        expectRecord(profile(first!, initial(last!)), nin(first!, middle!, last!), differs);
        // The profile gives the record's middle name as its first name (a relative, or the holder
        // by his middle name: a human's call).
        const byMiddle = profile(middle!, last!);
        expectRecord(byMiddle, nin(first!, middle!, last!), differs);
        expectBank(byMiddle, `${last} ${first} ${middle}`, differs);
        expectBank(byMiddle, `${last}, ${first} ${middle}`, differs);
        expectBank(byMiddle, `${first} ${middle} ${last}`, differs);
      }),
      runs,
    );
  });
});
