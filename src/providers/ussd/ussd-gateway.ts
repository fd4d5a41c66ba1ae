// A USSD gateway (an aggregator such as Africa's Talking) calls the service for every step a person
// takes on their phone. Its wire format (how a step arrives, how the answer is written) is the
// adapter's alone: the service sees a step as a UssdRequest and answers a UssdScreen. A second
// aggregator (HollaTags: GET parameters, a JSON answer, only the latest input) is one more adapter,
// plus the inputs kept per session (ussd_sessions is keyed by gateway for that).

/** One step of a session as the service sees it, whatever gateway brought it. */
export type UssdRequest = {
  /** The gateway's session id: the same for every step of one dialling. */
  sessionId: string;
  /** The code dialled (*384*2255#). */
  serviceCode: string;
  /** The caller, E.164; null when the gateway sent no Nigerian mobile number. */
  phone: string | null;
  /** The caller's network as MCC-MNC (62130 is MTN Nigeria), when the gateway says. */
  networkCode: string | null;
  /** Every input so far, oldest first; none on the first screen. The PIN is among them: never log them. */
  inputs: string[];
};

/** What the person sees next: CON keeps the session open for another input, END closes it. */
export type UssdScreen = { type: 'CON' | 'END'; text: string };

/** An HTTP answer in the gateway's wire format. */
export type UssdReply = { status: number; contentType: string; body: string };

/** A step the gateway sent that cannot be read (a field missing or too long): what to tell the person. */
export type UssdParse = { ok: true; request: UssdRequest } | { ok: false; reason: string };

export type UssdGateway = {
  /** The gateway's name, as the sessions and steps are keyed by it. */
  readonly name: string;
  /** Reads a callback's parsed body (form fields or query parameters) into a step. */
  parse(fields: unknown): UssdParse;
  /** Writes a screen as the gateway expects the answer. */
  render(screen: UssdScreen): UssdReply;
};

/** The bounds on what a gateway may send, so that nothing unbounded is hashed, stored or compared. */
export const ussdFieldLimits = {
  sessionIdLengthMax: 128,
  serviceCodeLengthMax: 40,
  textLengthMax: 500,
  inputsMax: 20,
} as const;
