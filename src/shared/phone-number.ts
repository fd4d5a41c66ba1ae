// Nigerian mobile numbers arrive as 0803..., 234803... or +234803...; they are stored and compared
// in E.164 (+2348031234567). A Nigerian mobile national number is 10 digits starting 70, 71, 80,
// 81, 90 or 91.

const NATIONAL_MOBILE = /^[789][01]\d{8}$/;

/** E.164 for a Nigerian mobile number in any of the three shapes, or null. No dependencies: the web
 * client bundles it too. */
export function toE164(input: string): string | null {
  const compact = input.replace(/[\s-]/g, '');
  let national: string | null = null;
  if (/^0\d{10}$/.test(compact)) national = compact.slice(1);
  else if (/^234\d{10}$/.test(compact)) national = compact.slice(3);
  else if (/^\+234\d{10}$/.test(compact)) national = compact.slice(4);
  if (national === null || !NATIONAL_MOBILE.test(national)) return null;
  return `+234${national}`;
}
