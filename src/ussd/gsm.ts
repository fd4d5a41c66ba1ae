// GSM 03.38 (3GPP TS 23.038): the 7-bit alphabet a USSD screen is sent in. One character outside it
// (₦, an accented Yoruba or Igbo letter, a curly quote) switches the whole screen to UCS-2, where it
// holds 80 characters instead of 182, and the person sees it cut. The extension table's characters
// are sent as an escape and the character: two septets each.

/** The basic character set, in code order (0x00-0x7F), 0x1B (the escape to the extension) left out. */
const basicSet =
  '@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà';
/** The extension table's characters, each sent as ESC and a second septet. */
const extensionSet = '\f^{}\\[~]|€';

const basic: ReadonlySet<string> = new Set(basicSet);
const extension: ReadonlySet<string> = new Set(extensionSet);

/** The most septets a screen may hold here: 160, under the gateways' 182, leaving room for their prefix. */
export const screenSeptetsMax = 160;

/** Septets the text takes in GSM 7-bit, or null when a character is outside the alphabet. */
export function gsmSeptets(text: string): number | null {
  let septets = 0;
  for (const character of text) {
    if (basic.has(character)) septets += 1;
    else if (extension.has(character)) septets += 2;
    else return null;
  }
  return septets;
}

/** Whether a screen's text fits one GSM 7-bit USSD screen as this service writes them. */
export const fitsScreen = (text: string): boolean => {
  const septets = gsmSeptets(text);
  return septets !== null && septets <= screenSeptetsMax;
};

/** Stand-ins in the alphabet for what the service's own texts hold outside it. */
const replacements: Readonly<Record<string, string>> = {
  '₦': 'N',
  '×': 'x',
  '‘': "'",
  '’': "'",
  '“': '"',
  '”': '"',
  '–': '-',
  '—': '-',
  '…': '...',
};

/**
 * A text (a purchase's description, a plan's name) written in the alphabet: ₦ as N, accents dropped
 * (Ọ̀ → O), anything else outside it left out. For texts the service did not write for a screen.
 */
export function toGsm(text: string): string {
  let out = '';
  for (const character of text.normalize('NFD')) {
    const replaced = replacements[character] ?? character;
    if (gsmSeptets(replaced) !== null) out += replaced;
  }
  return out;
}
