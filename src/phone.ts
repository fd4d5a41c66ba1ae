import { z } from 'zod';

import { toE164 } from './shared/phone-number.ts';

export { toE164 };

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
