import { Download, FileText, Share2 } from 'lucide-react';
import { useState } from 'react';
import { formatNairaNumber } from '../format.ts';
import {
  download,
  type ReceiptContent,
  receiptFileName,
  receiptPdf,
  receiptPng,
  receiptRows,
  receiptText,
} from '../receipt-files.ts';
import { ReportProblem } from './report-problem.tsx';

// A receipt on screen, and the ways to keep it: shared (the image where the phone can share files,
// else its text), saved as a PNG image or as a PDF. It takes plain content, so any screen can show
// one: a purchase, a wallet movement, a transfer just sent. Under a purchase's or a wallet movement's,
// the person can report a problem with it (report-problem.tsx).

export type { ReceiptContent, ReceiptLine } from '../receipt-files.ts';

type Action = 'share' | 'png' | 'pdf';

const canShare = () => typeof navigator !== 'undefined' && typeof navigator.share === 'function';

async function share(receipt: ReceiptContent): Promise<void> {
  const text = receiptText(receipt);
  const image = new File([await receiptPng(receipt)], receiptFileName(receipt, 'png'), { type: 'image/png' });
  try {
    if (navigator.canShare?.({ files: [image] })) {
      await navigator.share({ files: [image], title: 'billrail receipt', text });
    } else {
      await navigator.share({ title: 'billrail receipt', text });
    }
  } catch (error) {
    // The person closed the share sheet: nothing went wrong.
    if (!(error instanceof DOMException && error.name === 'AbortError')) throw error;
  }
}

/**
 * A receipt; `reportable` adds "Report a problem" under it, with the transaction's disputes (its
 * reference must be one the service knows as the person's: a purchase's or a wallet movement's).
 */
export function Receipt({ receipt, reportable = false }: { receipt: ReceiptContent; reportable?: boolean }) {
  const [busy, setBusy] = useState<Action | null>(null);
  const [failed, setFailed] = useState<string | null>(null);
  const run = (action: Action, work: () => Promise<void>) => async () => {
    setBusy(action);
    setFailed(null);
    try {
      await work();
    } catch {
      setFailed(
        action === 'share'
          ? 'The receipt could not be shared.'
          : 'The receipt could not be saved. Try again.',
      );
    } finally {
      setBusy(null);
    }
  };
  const button =
    'flex flex-1 items-center justify-center gap-2 rounded-lg border border-brand px-3 py-2 font-semibold text-brand disabled:opacity-60';

  return (
    <>
      <section
        aria-labelledby="receipt-title"
        className="flex flex-col gap-3 rounded-xl border border-gray-300 p-4"
      >
        <h2 id="receipt-title" className="text-lg font-semibold">
          Receipt
        </h2>
        <p className="text-gray-700">{receipt.title}</p>
        <p className="whitespace-nowrap text-2xl font-bold" data-testid="receipt-amount">
          {receipt.direction === 'credit' ? '+' : receipt.direction === 'debit' ? '−' : ''}
          {formatNairaNumber(receipt.amount)}
        </p>
        <dl className="grid grid-cols-[auto_minmax(0,1fr)] gap-x-4 gap-y-2">
          {receiptRows(receipt).map((row) => (
            <div key={row.label} className="contents">
              <dt className="text-gray-700">{row.label}</dt>
              <dd className="font-medium wrap-anywhere">{row.value}</dd>
            </div>
          ))}
        </dl>
        <div className="flex flex-wrap gap-2">
          {canShare() ? (
            <button
              type="button"
              className={button}
              disabled={busy !== null}
              onClick={run('share', () => share(receipt))}
            >
              <Share2 size={18} aria-hidden="true" />
              {busy === 'share' ? 'Sharing…' : 'Share'}
            </button>
          ) : null}
          <button
            type="button"
            className={button}
            disabled={busy !== null}
            onClick={run('png', async () =>
              download(await receiptPng(receipt), receiptFileName(receipt, 'png')),
            )}
          >
            <Download size={18} aria-hidden="true" />
            {busy === 'png' ? 'Saving…' : 'Save image'}
          </button>
          <button
            type="button"
            className={button}
            disabled={busy !== null}
            onClick={run('pdf', async () =>
              download(await receiptPdf(receipt), receiptFileName(receipt, 'pdf')),
            )}
          >
            <FileText size={18} aria-hidden="true" />
            {busy === 'pdf' ? 'Saving…' : 'Save PDF'}
          </button>
        </div>
        <div role="alert">
          {failed ? <p className="rounded-lg bg-red-100 p-3 text-red-900">{failed}</p> : null}
        </div>
      </section>
      {reportable ? <ReportProblem reference={receipt.reference} /> : null}
    </>
  );
}
