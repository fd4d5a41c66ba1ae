// The last balance and history the person saw, kept so that they can be read offline (API.md
// section 15), always shown with the time they were true.

type Kept<T> = { value: T; at: string };

export function keep<T>(key: string, value: T): void {
  localStorage.setItem(`billrail.kept.${key}`, JSON.stringify({ value, at: new Date().toISOString() }));
}

export function kept<T>(key: string): Kept<T> | null {
  const text = localStorage.getItem(`billrail.kept.${key}`);
  return text === null ? null : (JSON.parse(text) as Kept<T>);
}
