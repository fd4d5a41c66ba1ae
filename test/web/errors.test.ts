import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { describeError } from '../../web/src/api/errors.ts';

// The web client's words for the service's errors (web/src/api/errors.ts): a plain function, so it is
// tested without a browser.

describe('the web client’s error words', () => {
  it('says what a Nigerian mobile number looks like when the phone is what was refused', () => {
    const phone = 'That is not a Nigerian mobile number. Enter the 11 digits, like 0803 123 4567.';
    // As the service answers a schema refusal (its path), and a refusal naming its field.
    const bySchema = {
      code: 'VALIDATION_ERROR',
      message: 'the input does not match the schema',
      status: 400,
      details: { issues: [{ path: ['data', 'phone'], message: 'not a Nigerian mobile number' }] },
    };
    assert.equal(describeError(bySchema), phone);
    assert.equal(
      describeError({
        code: 'VALIDATION_ERROR',
        message: 'x',
        status: 400,
        details: { field: 'recipientPhone' },
      }),
      phone,
    );
    // Any other field keeps the general words.
    assert.equal(
      describeError({
        ...bySchema,
        details: { issues: [{ path: ['data', 'amount'], message: 'too small' }] },
      }),
      'Some of what you entered is not right. Check it and try again.',
    );
  });
});
