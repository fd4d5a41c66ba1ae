import { type EndpointOptions, type JsonEndpoint, jsonEndpoint } from '../http-exchange.ts';

// What the four VTU clients (data, bills, social, airtime-to-cash) share in their options and in the
// connection each builds once and hands to every call: the configuration name and the endpoint.
// Each client's own options and connection add its credentials and its state.

/** The options every VTU client takes. */
export type VtuClientOptions = EndpointOptions & {
  /** The configuration name (data, bills, social). */
  name: string;
};

/** What every call of a VTU client needs. */
export type VtuConnection = {
  /** The configuration name, in every reason and error. */
  provider: string;
  endpoint: JsonEndpoint;
};

/** A client's connection from its options, with the headers every call carries (its credentials, if any). */
export function vtuConnection(options: VtuClientOptions, headers: Record<string, string>): VtuConnection {
  return { provider: options.name, endpoint: jsonEndpoint(options.name, options, headers) };
}
