/**
 * What `read` answers, or a failure once `ms` have passed without its answer: for a read that an
 * outside party or a silent database could hold for good (the figures' refresh, a /metrics scrape).
 */
export async function withinDeadline<T>(read: () => Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([read(), deadline]);
  } finally {
    clearTimeout(timer);
  }
}
