import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import { type CallError, call } from '../api/client.ts';
import { BankSelect } from './kyc-bank-select.tsx';
import { describeKycRefusal, describeTierReason } from './kyc-refusals.tsx';
import { Select } from './select.tsx';
import { Button, ErrorNote, Field } from './ui.tsx';

// Tier 3 (API.md section 7): a bank account in the verified name, and an ID document (a photo or
// PDF, sent as the contract asks: base64), then a person on our side reviews it.

const documentTypes = [
  { value: 'passport', label: 'International passport' },
  { value: 'drivers_licence', label: "Driver's licence" },
  { value: 'voters_card', label: "Voter's card" },
  { value: 'nin_slip', label: 'NIN slip' },
] as const;
type DocumentType = (typeof documentTypes)[number]['value'];
type Mime = 'image/jpeg' | 'image/png' | 'application/pdf';
const byExtension: Readonly<Record<string, Mime>> = {
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  png: 'image/png',
  pdf: 'application/pdf',
};
const mimes: readonly string[] = Object.values(byExtension);

/** The file's type, from the browser or else its name (some phones' pickers give no type). */
function mimeOf(file: File): Mime | null {
  if (mimes.includes(file.type)) return file.type as Mime;
  if (file.type !== '') return null;
  return byExtension[file.name.split('.').pop()?.toLowerCase() ?? ''] ?? null;
}
/** The largest document the service takes, in bytes, before base64 (src/kyc/documents.ts). */
const documentBytesMax = 5 * 1024 * 1024;

function readAsBase64(file: File): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result).replace(/^data:[^,]*,/, ''));
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(file);
  });
}

/** What is wrong with a chosen file before it is sent, if anything. */
function fileProblem(file: File): string | undefined {
  if (mimeOf(file) === null) return 'Choose a JPG or PNG photo, or a PDF.';
  if (file.size > documentBytesMax) return 'The file is larger than 5 MB. Choose a smaller photo or PDF.';
  return undefined;
}

export function Tier3Form({ onSettled }: { onSettled: () => void }) {
  const [bankCode, setBankCode] = useState('');
  const [accountNumber, setAccountNumber] = useState('');
  const [documentType, setDocumentType] = useState<DocumentType>('passport');
  const [file, setFile] = useState<File | null>(null);
  const fileError = file === null ? undefined : fileProblem(file);
  const submit = useMutation({
    mutationFn: async (document: File) =>
      call('submitKycTier3', {
        bankCode,
        accountNumber,
        documentType,
        documentBase64: await readAsBase64(document),
        documentMimeType: mimeOf(document)!,
      }),
    onSettled,
  });
  const error = submit.error as CallError | null;
  const ready = file !== null && fileError === undefined && bankCode !== '' && /^\d{10}$/.test(accountNumber);
  return (
    <form
      aria-label="Bank account and ID"
      className="flex flex-col gap-4"
      onSubmit={(event) => {
        event.preventDefault();
        if (ready) submit.mutate(file);
      }}
    >
      <p className="text-sm text-gray-700">The account must be in the name you verified with your NIN.</p>
      <BankSelect value={bankCode} onChange={setBankCode} />
      <Field
        label="Account number"
        value={accountNumber}
        onChange={(typed) => setAccountNumber(typed.replace(/\D/g, ''))}
        inputMode="numeric"
        maxLength={10}
        hint="10 digits"
      />
      <Select
        label="Document"
        value={documentType}
        onChange={(value) => setDocumentType(value as DocumentType)}
        options={documentTypes}
      />
      <label className="flex flex-col gap-1">
        <span className="font-medium">Photo or PDF of the document</span>
        <input
          type="file"
          accept="image/jpeg,image/png,application/pdf"
          aria-describedby={fileError ? 'document-error' : 'document-hint'}
          onChange={(event) => setFile(event.target.files?.[0] ?? null)}
        />
      </label>
      {fileError ? (
        <p id="document-error" className="text-sm text-red-800">
          {fileError}
        </p>
      ) : (
        <p id="document-hint" className="text-sm text-gray-700">
          A clear photo (JPG or PNG) or a PDF, up to 5 MB.
        </p>
      )}
      <ErrorNote error={error} message={error ? describeKycRefusal(error) : undefined} />
      <p role="status" aria-live="polite" className="text-red-900" data-testid="tier3-outcome">
        {submit.data?.status === 'rejected' ? describeTierReason(3, submit.data.reason, '') : null}
      </p>
      <Button type="submit" busy={submit.isPending} disabled={!ready}>
        Submit for review
      </Button>
    </form>
  );
}
