// Provider marks drawn here rather than hot-linked or copied: each provider's initials on its own
// brand colour, so a person recognises MTN's yellow or DStv's blue at a glance, offline too, with no
// third-party request (the Content-Security-Policy allows none) and nothing trademarked bundled.

type Mark = { initials: string; background: string; ink: string };

const marks: Record<string, Mark> = {
  mtn: { initials: 'MTN', background: '#ffcc00', ink: '#000000' },
  glo: { initials: 'glo', background: '#3f9b37', ink: '#ffffff' },
  airtel: { initials: 'A', background: '#e40000', ink: '#ffffff' },
  '9mobile': { initials: '9m', background: '#006838', ink: '#ffffff' },
  dstv: { initials: 'DStv', background: '#0033a1', ink: '#ffffff' },
  gotv: { initials: 'GOtv', background: '#3d8b1f', ink: '#ffffff' },
  startimes: { initials: 'ST', background: '#c25e00', ink: '#ffffff' },
  showmax: { initials: 'SM', background: '#1e1e1e', ink: '#ffffff' },
  waec: { initials: 'WAEC', background: '#00529b', ink: '#ffffff' },
  neco: { initials: 'NECO', background: '#006400', ink: '#ffffff' },
  nabteb: { initials: 'NB', background: '#7a1f1f', ink: '#ffffff' },
  jamb: { initials: 'JAMB', background: '#0b6e4f', ink: '#ffffff' },
  // DisCos and betting companies by the short names people know them by, each in a colour of its
  // own, so that twelve of them side by side are told apart at a glance.
  'ikeja-electric': { initials: 'IE', background: '#c8102e', ink: '#ffffff' },
  'eko-electric': { initials: 'EKO', background: '#00539f', ink: '#ffffff' },
  'abuja-electric': { initials: 'AEDC', background: '#00763a', ink: '#ffffff' },
  'kano-electric': { initials: 'KE', background: '#f2a900', ink: '#000000' },
  'portharcourt-electric': { initials: 'PHED', background: '#005eb8', ink: '#ffffff' },
  'jos-electric': { initials: 'JED', background: '#6d2077', ink: '#ffffff' },
  'kaduna-electric': { initials: 'KAD', background: '#b5451b', ink: '#ffffff' },
  'enugu-electric': { initials: 'EEDC', background: '#007a87', ink: '#ffffff' },
  'ibadan-electric': { initials: 'IBE', background: '#e35205', ink: '#000000' },
  'benin-electric': { initials: 'BEDC', background: '#2d2a7a', ink: '#ffffff' },
  'aba-electric': { initials: 'ABA', background: '#4a7729', ink: '#ffffff' },
  'yola-electric': { initials: 'YEDC', background: '#8a1538', ink: '#ffffff' },
  bet9ja: { initials: '9ja', background: '#01632e', ink: '#ffffff' },
  sportybet: { initials: 'SB', background: '#e41827', ink: '#ffffff' },
  betking: { initials: 'BK', background: '#1d2f6f', ink: '#ffffff' },
  '1xbet': { initials: '1x', background: '#1a5a96', ink: '#ffffff' },
  nairabet: { initials: 'NB', background: '#d4a017', ink: '#000000' },
  msport: { initials: 'MS', background: '#ffd200', ink: '#000000' },
  betway: { initials: 'bw', background: '#000000', ink: '#ffffff' },
  bangbet: { initials: 'BB', background: '#7b2cbf', ink: '#ffffff' },
  merrybet: { initials: 'MB', background: '#c2185b', ink: '#ffffff' },
  betland: { initials: 'BL', background: '#00897b', ink: '#ffffff' },
  livescorebet: { initials: 'LS', background: '#ff6a13', ink: '#000000' },
  naijabet: { initials: 'NJ', background: '#2e7d32', ink: '#ffffff' },
};

/** A stable colour for a provider without a mark of its own (one a provider adds to its catalogue later). */
function fallback(id: string, name: string): Mark {
  let hash = 0;
  for (const char of id) hash = (hash * 31 + char.charCodeAt(0)) % 360;
  const initials = name
    .split(/[\s-]+/)
    .filter((word) => /^[A-Za-z0-9]/.test(word))
    .slice(0, 2)
    .map((word) => word[0]!.toUpperCase())
    .join('');
  return { initials: initials || '?', background: `hsl(${hash} 55% 32%)`, ink: '#ffffff' };
}

export function ProviderLogo({ id, name, size = 32 }: { id: string; name: string; size?: number }) {
  const mark = marks[id] ?? (id.startsWith('waec') ? marks.waec! : fallback(id, name));
  const fontSize = mark.initials.length > 3 ? 9 : mark.initials.length > 2 ? 11 : 14;
  return (
    <svg width={size} height={size} viewBox="0 0 32 32" aria-hidden="true" className="shrink-0">
      <circle cx="16" cy="16" r="16" fill={mark.background} />
      <text
        x="16"
        y="16"
        textAnchor="middle"
        dominantBaseline="central"
        fill={mark.ink}
        fontSize={fontSize}
        fontWeight="700"
        fontFamily="system-ui, sans-serif"
      >
        {mark.initials}
      </text>
    </svg>
  );
}
