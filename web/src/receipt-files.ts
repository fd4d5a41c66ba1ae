import { formatDateTime, formatNairaNumber } from './format.ts';

// A receipt as files a person can keep or send: a PNG drawn on a canvas here (no library), a PDF made
// with jsPDF, which is loaded only when one is asked for so that it stays out of the first load, and
// plain text for a share without files. Colours are the app's own palette, read from its CSS.

export type ReceiptLine = { label: string; value: string };

export type ReceiptContent = {
  /** What it was: "Airtime purchase", "Money sent". */
  title: string;
  /** Naira. */
  amount: number;
  direction?: 'credit' | 'debit' | undefined;
  /** In words: Successful, Failed, Pending. */
  status: string;
  lines: readonly ReceiptLine[];
  reference: string;
  createdAt: string;
};

export const receiptFileName = (receipt: ReceiptContent, extension: 'png' | 'pdf'): string =>
  `billrail-receipt-${receipt.reference.replace(/[^A-Za-z0-9-]/g, '')}.${extension}`;

const signed = (receipt: ReceiptContent) =>
  `${receipt.direction === 'credit' ? '+' : receipt.direction === 'debit' ? '−' : ''}${formatNairaNumber(receipt.amount)}`;

/** Every line of the receipt, label first, the same in the PNG, the PDF and a shared text. */
export function receiptRows(receipt: ReceiptContent): ReceiptLine[] {
  return [
    { label: 'Status', value: receipt.status },
    ...receipt.lines,
    { label: 'Reference', value: receipt.reference },
    { label: 'Date', value: formatDateTime(receipt.createdAt) },
  ];
}

export function receiptText(receipt: ReceiptContent): string {
  return [
    `billrail receipt: ${receipt.title}`,
    signed(receipt),
    ...receiptRows(receipt).map((row) => `${row.label}: ${row.value}`),
  ].join('\n');
}

/** Saves a file through the browser's own download. */
export function download(blob: Blob, name: string): void {
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  document.body.append(link);
  link.click();
  link.remove();
  // The download has started from the URL by now; it is let go a little later, not at once.
  setTimeout(() => URL.revokeObjectURL(url), 30_000);
}

/** A colour of the app's palette (styles.css), so the image follows the theme the person sees. */
function palette() {
  const style = getComputedStyle(document.documentElement);
  const colour = (name: string, otherwise: string) =>
    style.getPropertyValue(`--color-${name}`).trim() || otherwise;
  return {
    surface: colour('white', 'white'),
    ink: colour('gray-900', 'black'),
    muted: colour('gray-700', 'dimgray'),
    line: colour('gray-300', 'lightgray'),
    brand: colour('brand', 'darkgreen'),
  };
}

const imageWidth = 720;
const margin = 40;
const font = (size: number, weight = 400) => `${weight} ${size}px system-ui, sans-serif`;

/** The words of `text` in lines no wider than `width`; a word too long for a line is cut. */
function wrap(context: CanvasRenderingContext2D, text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/)) {
    const candidate = line === '' ? word : `${line} ${word}`;
    if (context.measureText(candidate).width <= width) {
      line = candidate;
      continue;
    }
    if (line !== '') lines.push(line);
    line = word;
    while (context.measureText(line).width > width && line.length > 1) {
      let cut = line.length - 1;
      while (cut > 1 && context.measureText(line.slice(0, cut)).width > width) cut -= 1;
      lines.push(line.slice(0, cut));
      line = line.slice(cut);
    }
  }
  if (line !== '') lines.push(line);
  return lines;
}

/** Lays the receipt out on the context, drawing only when asked; answers the height it takes. */
function layOut(context: CanvasRenderingContext2D, receipt: ReceiptContent, draw: boolean): number {
  const colours = palette();
  const inner = imageWidth - 2 * margin;
  const text = (value: string, x: number, y: number, style: string, colour: string) => {
    context.font = style;
    if (draw) {
      context.fillStyle = colour;
      context.fillText(value, x, y);
    }
  };
  if (draw) {
    context.fillStyle = colours.brand;
    context.fillRect(0, 0, imageWidth, 72);
  }
  context.textBaseline = 'middle';
  text('billrail', margin, 36, font(28, 700), colours.surface);
  context.textAlign = 'right';
  text('Receipt', imageWidth - margin, 36, font(20, 600), colours.surface);
  context.textAlign = 'left';
  context.textBaseline = 'alphabetic';

  let y = 130;
  text(receipt.title, margin, y, font(22, 600), colours.muted);
  y += 56;
  text(signed(receipt), margin, y, font(44, 700), colours.ink);
  y += 36;
  for (const row of receiptRows(receipt)) {
    y += 20;
    if (draw) {
      context.fillStyle = colours.line;
      context.fillRect(margin, y, inner, 1);
    }
    y += 30;
    text(row.label, margin, y, font(18, 400), colours.muted);
    context.font = font(22, 600);
    for (const line of wrap(context, row.value, inner)) {
      y += 30;
      text(line, margin, y, font(22, 600), colours.ink);
    }
  }
  return y + margin;
}

/** The receipt as a PNG image. */
export async function receiptPng(receipt: ReceiptContent): Promise<Blob> {
  const measure = document.createElement('canvas').getContext('2d');
  if (measure === null) throw new Error('this browser cannot draw images');
  const canvas = document.createElement('canvas');
  canvas.width = imageWidth;
  canvas.height = Math.ceil(layOut(measure, receipt, false));
  const context = canvas.getContext('2d')!;
  context.fillStyle = palette().surface;
  context.fillRect(0, 0, canvas.width, canvas.height);
  layOut(context, receipt, true);
  return new Promise((resolve, reject) =>
    canvas.toBlob((blob) => (blob === null ? reject(new Error('no image')) : resolve(blob)), 'image/png'),
  );
}

/**
 * The receipt as a PDF. jsPDF's built-in fonts have no naira sign, so the PDF writes NGN. Written
 * uncompressed: a receipt is a page of text, and its words stay findable in the file.
 */
export async function receiptPdf(receipt: ReceiptContent): Promise<Blob> {
  const { jsPDF } = await import('jspdf');
  const plain = (text: string) => text.replace(/₦/g, 'NGN ').replace(/−/g, '-');
  const doc = new jsPDF({ unit: 'pt', format: 'a5', compress: false });
  const width = doc.internal.pageSize.getWidth() - 2 * margin;
  let y = margin + 10;
  doc.setFont('helvetica', 'bold').setFontSize(18).text('billrail receipt', margin, y);
  y += 28;
  doc.setFont('helvetica', 'normal').setFontSize(12).setTextColor(90).text(plain(receipt.title), margin, y);
  y += 26;
  doc
    .setFont('helvetica', 'bold')
    .setFontSize(22)
    .setTextColor(0)
    .text(plain(signed(receipt)), margin, y);
  y += 16;
  const pageEnd = doc.internal.pageSize.getHeight() - margin;
  for (const row of receiptRows(receipt)) {
    if (y > pageEnd - 40) {
      doc.addPage();
      y = margin;
    }
    y += 22;
    doc.setFont('helvetica', 'normal').setFontSize(9).setTextColor(90).text(row.label, margin, y);
    const lines = doc.splitTextToSize(plain(row.value), width) as string[];
    y += 14;
    doc.setFont('helvetica', 'bold').setFontSize(11).setTextColor(0).text(lines, margin, y);
    y += (lines.length - 1) * 14;
  }
  return doc.output('blob');
}
