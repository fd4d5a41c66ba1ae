import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { carriedIpv4, ipv4EmbeddingForms, isRefusedAddress } from '../src/outbound-addresses.ts';

// The IPv6 forms that carry an IPv4 address (NAT64, 6to4, Teredo, IPv4-compatible and -mapped) are
// judged like the IPv4 address they carry: each form with the metadata address, loopback and a
// private address is refused, and the same form with a public address is not.

/** 169.254.169.254 (metadata), 127.0.0.1 (loopback), 10.1.2.3 (private), 8.8.8.8 (public) in each form. */
const forms: Record<string, { internal: string[]; public: string; carries: string }> = {
  'IPv4-mapped': {
    internal: ['::ffff:a9fe:a9fe', '::ffff:127.0.0.1', '::ffff:a01:203'],
    public: '::ffff:808:808',
    carries: '8.8.8.8',
  },
  'IPv4-compatible': {
    internal: ['::a9fe:a9fe', '::127.0.0.1', '::a01:203'],
    public: '::808:808',
    carries: '8.8.8.8',
  },
  NAT64: {
    internal: ['64:ff9b::a9fe:a9fe', '64:ff9b::169.254.169.254', '64:ff9b::7f00:1', '64:ff9b::a01:203'],
    public: '64:ff9b::808:808',
    carries: '8.8.8.8',
  },
  '6to4': {
    internal: ['2002:a9fe:a9fe::', '2002:7f00:1::1', '2002:a01:203:1::5'],
    public: '2002:808:808::1',
    carries: '8.8.8.8',
  },
  // Client 169.254.169.254 is written as its complement, 5601:5601; server 8.8.8.8 (or an internal one).
  Teredo: {
    internal: [
      '2001:0:808:808:0:0:5601:5601',
      '2001:0:808:808:8000:ffff:80ff:fffe', // client 127.0.0.1
      '2001:0:a9fe:a9fe:0:0:f7f7:f7f7', // server 169.254.169.254, client 8.8.8.8
    ],
    public: '2001:0:808:808:0:0:f7f7:f7f7',
    carries: '8.8.8.8',
  },
};

describe('outbound addresses: IPv6 forms that carry an IPv4 address', () => {
  it('has one entry per form in the table', () => {
    assert.deepEqual(ipv4EmbeddingForms.map((f) => f.form).sort(), [
      '6to4',
      'IPv4-compatible',
      'IPv4-mapped',
      'NAT64',
      'NAT64 local-use',
      'Teredo',
    ]);
  });

  for (const [form, cases] of Object.entries(forms)) {
    it(`${form}: refused when it carries an internal IPv4, public when it carries a public one`, () => {
      for (const address of cases.internal) assert.equal(isRefusedAddress(address), true, address);
      assert.equal(isRefusedAddress(cases.public), false, cases.public);
      assert.ok(
        carriedIpv4(cases.public).includes(cases.carries),
        `${cases.public} carries ${cases.carries}`,
      );
    });
  }

  it('reads the IPv4 each form carries', () => {
    assert.deepEqual(carriedIpv4('64:ff9b::a9fe:a9fe'), ['169.254.169.254']);
    assert.deepEqual(carriedIpv4('2002:c000:201::'), ['192.0.2.1']);
    assert.deepEqual(carriedIpv4('::ffff:a9fe:a9fe'), ['169.254.169.254']);
    assert.deepEqual(carriedIpv4('::c0a8:101'), ['192.168.1.1']);
    // Teredo: the server (bits 32-63), then the client (the last 32 bits, complemented).
    assert.deepEqual(carriedIpv4('2001:0:4136:e378:8000:63bf:3fff:fdd2'), ['65.54.227.120', '192.0.2.45']);
    assert.deepEqual(carriedIpv4('2606:4700::1111'), []);
  });

  it('refuses the NAT64 local-use prefix whatever it carries: a translator of the network’s own', () => {
    for (const address of ['64:ff9b:1::808:808', '64:ff9b:1:a9fe:a9fe::', '64:ff9b:1:ffff::1']) {
      assert.equal(isRefusedAddress(address), true, address);
    }
  });

  it('still judges plain addresses as before', () => {
    assert.deepEqual(
      [
        '8.8.8.8',
        '2606:4700::1111',
        '2620:149::1',
        '10.0.0.1',
        '::1',
        '::',
        'fe80::1%eth0',
        'fd00:ec2::254',
        'x',
      ].map(isRefusedAddress),
      [false, false, false, true, true, true, true, true, true],
    );
  });
});
