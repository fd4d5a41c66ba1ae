import { z } from 'zod';

// Nigerian mobile numbers arrive as 0803..., 234803... or +234803...; they are stored and compared
// in E.164 (+2348031234567). A Nigerian mobile national number is 10 digits starting 70, 71, 80,
// 81, 90 or 91.

const NATIONAL_MOBILE = /^[789][01]\d{8}$/;

export function toE164(input: string): string | null {
  const compact = input.replace(/[\s-]/g, '');
  let national: string | null = null;
  if (/^0\d{10}$/.test(compact)) national = compact.slice(1);
  else if (/^234\d{10}$/.test(compact)) national = compact.slice(3);
  else if (/^\+234\d{10}$/.test(compact)) national = compact.slice(4);
  if (national === null || !NATIONAL_MOBILE.test(national)) return null;
  return `+234${national}`;
}

/** A schema that accepts any of the three shapes and yields E.164. */
export const nigerianPhone = z
  .string()
  .max(20)
  .transform((value, ctx) => {
    const e164 = toE164(value);
    if (e164 === null) {
      ctx.addIssue({
        code: 'custom',
        message: 'not a Nigerian mobile number (0803..., 234803... or +234803...)',
      });
      return z.NEVER;
    }
    return e164;
  });
