// The four mobile networks billrail sells, with the names a person reads. Shared by the service and
// the web client (src/shared is bundled into the client: nothing here may import service code).

export const networks = ['mtn', 'glo', 'airtel', '9mobile'] as const;
export type Network = (typeof networks)[number];

export const networkNames: Readonly<Record<Network, string>> = {
  mtn: 'MTN',
  glo: 'Glo',
  airtel: 'Airtel',
  '9mobile': '9mobile',
};

/**
 * Each network's mobile network code as the GSM world writes it (MCC-MNC: Nigeria's 621, then the
 * network's), as a USSD gateway names the caller's network in `networkCode`.
 */
export const mobileNetworkCodes: Readonly<Record<Network, string>> = {
  airtel: '62120',
  mtn: '62130',
  glo: '62150',
  '9mobile': '62160',
};
