/** The part of autocannon's programmatic API the bench uses (the package ships no types). */
declare module 'autocannon' {
  namespace autocannon {
    interface Options {
      url: string;
      method?: string;
      headers?: Record<string, string>;
      connections?: number;
      pipelining?: number;
      duration?: number;
      overallRate?: number;
      timeout?: number;
      ignoreCoordinatedOmission?: boolean;
      /** Per request: build it (from the connection's context, cleared before each request) and read its answer. */
      requests?: {
        setupRequest?: (req: Record<string, unknown>, context: Record<string, any>) => Record<string, unknown>;
        onResponse?: (status: number, body: string, context: Record<string, any>) => void;
      }[];
    }
    interface Result {
      errors: number;
      timeouts: number;
      non2xx: number;
      totalCompletedRequests: number;
      latency: { p50: number; p99: number; average: number; max: number };
      requests: { average: number };
    }
    interface Instance {
      on(event: 'response', listener: (client: unknown, statusCode: number, bytes: number, responseTime: number) => void): this;
      stop(): void;
    }
  }
  function autocannon(options: autocannon.Options, callback: (err: Error | null, result: autocannon.Result) => void): autocannon.Instance;
  export = autocannon;
}
