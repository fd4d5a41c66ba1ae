import { Button } from './ui.tsx';

/**
 * Newer and Older under a newest-first admin list paged by limit/offset (API.md section 5): shown
 * only when there is more than one page, each button off at its end or while a page loads.
 */
export function Pager(props: {
  offset: number;
  pageSize: number;
  total: number;
  busy?: boolean;
  onOffset: (offset: number) => void;
}) {
  const { offset, pageSize, total, busy = false, onOffset } = props;
  if (total <= pageSize) return null;
  return (
    <div className="flex justify-between gap-2">
      <Button
        variant="secondary"
        disabled={offset === 0 || busy}
        onClick={() => onOffset(Math.max(0, offset - pageSize))}
      >
        Newer
      </Button>
      <Button
        variant="secondary"
        disabled={offset + pageSize >= total || busy}
        onClick={() => onOffset(offset + pageSize)}
      >
        Older
      </Button>
    </div>
  );
}
