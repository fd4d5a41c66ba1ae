// The names a person reads for what the providers sell. Provider catalogues name things for their own
// screens: "Ikeja Electric Payment - IKEDC", "DStv Padi N4,400", "MTN N1000 1.5GB - 30 days", a price
// inside the name, written again beside the amount. Shared by the service (the descriptions it
// stores) and the web client (src/shared is bundled into the client: nothing here may import service
// code).

export const serviceNames: Readonly<Record<string, string>> = {
  airtime: 'Airtime',
  data: 'Data',
  cable: 'Cable TV',
  electricity: 'Electricity',
  betting: 'Betting',
  education: 'Exam pins',
  social: 'Social media',
  airtime_to_cash: 'Airtime to cash',
};

export const cableProviderNames: Readonly<Record<string, string>> = {
  dstv: 'DStv',
  gotv: 'GOtv',
  startimes: 'StarTimes',
  showmax: 'Showmax',
};

/** A price written into a name: "N4,400", "N1000", "₦500", "1900 Naira". */
const pricePattern =
  /(?:\b[N₦]\s?\d[\d,]*(?:\.\d+)?\b|₦\s?\d[\d,]*(?:\.\d+)?|\b\d[\d,]*(?:\.\d+)?\s*Naira\b)/gi;

/** A plan's name without the price its provider wrote into it: "DStv Padi N4,400" → "DStv Padi". */
export function withoutPrice(name: string): string {
  // The separators a removed price leaves side by side ("Nova - 1900 Naira - 1 Month") become one.
  const parts = ` ${name.replace(pricePattern, ' ')} `
    .split(/\s-(?=\s)/)
    .map((part) => part.replace(/\s+/g, ' ').trim())
    .filter((part) => part !== '');
  return parts.length === 0 ? name.trim() : parts.join(' - ');
}

/**
 * A distribution company as people call it ("Ikeja Electric") from its catalogue name, which may
 * carry the word "Payment", an acronym and the company's long form in either order.
 */
export function discoName(catalogueName: string): string {
  const parts = catalogueName.split(/\s+-\s+/).map((part) =>
    part
      .replace(/\b(?:Payment|Disco)\b/gi, '')
      .replace(/\bElectricity(?: Distribution Company)?\b/i, 'Electric')
      .replace(/\s+/g, ' ')
      .trim(),
  );
  return parts.find((part) => /\bElectric\b/i.test(part)) ?? parts[0] ?? catalogueName;
}
