// autocannon ships no types. This declares the part of its programmatic API that bench/run.ts uses
// (autocannon 9: https://github.com/mcollina/autocannon#api), so that the bench typechecks under strict.

declare module 'autocannon' {
  namespace autocannon {
    type Histogram = {
      average: number;
      mean: number;
      stddev: number;
      min: number;
      max: number;
      total: number;
      p50: number;
      p90: number;
      p97_5: number;
      p99: number;
    };

    type RequestContext = Record<string, unknown>;

    type Request = {
      method?: string;
      path?: string;
      headers?: Record<string, string>;
      body?: string | Buffer;
      /** Called before each request is built; returning a falsy value skips it. */
      setupRequest?: (request: Request, context: RequestContext) => Request | null | undefined;
      onResponse?: (status: number, body: string, context: RequestContext) => void;
    };

    type Client = {
      setHeaders(headers: Record<string, string>): void;
      setBody(body: string | Buffer): void;
    };

    type Options = {
      /** Several: connection i goes to url[i % url.length]. */
      url: string | string[];
      connections?: number;
      /** Seconds. */
      duration?: number;
      /** Total requests; overrides duration. */
      amount?: number;
      pipelining?: number;
      /** Seconds. */
      timeout?: number;
      method?: string;
      headers?: Record<string, string>;
      body?: string;
      requests?: Request[];
      setupClient?: (client: Client) => void;
    };

    type Result = {
      requests: Histogram;
      latency: Histogram;
      throughput: Histogram;
      errors: number;
      timeouts: number;
      non2xx: number;
      '2xx': number;
      duration: number;
      statusCodeStats: Record<string, { count: number }>;
    };
  }

  function autocannon(options: autocannon.Options): Promise<autocannon.Result>;
  export default autocannon;
}
