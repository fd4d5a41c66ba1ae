// The last balance and history the person saw, kept so that they can be read offline (API.md
// section 15), always shown with the time they were true.

type Kept<T> = { value: T; at: string };

const prefix = 'billrail.kept.';

export function keep<T>(key: string, value: T): void {
  localStorage.setItem(`${prefix}${key}`, JSON.stringify({ value, at: new Date().toISOString() }));
}

export function kept<T>(key: string): Kept<T> | null {
  const text = localStorage.getItem(`${prefix}${key}`);
  return text === null ? null : (JSON.parse(text) as Kept<T>);
}

/**
 * Forgets everything kept: the session ended or another began (api/session.ts), so a shared phone
 * never shows one person's balance to the next, not even offline.
 */
export function forgetKept(): void {
  const keys = Array.from({ length: localStorage.length }, (_, i) => localStorage.key(i));
  for (const key of keys) if (key?.startsWith(prefix)) localStorage.removeItem(key);
}
