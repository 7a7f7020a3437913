/** How much of a quota is used: a bar when there is a quota, the figure alone when there is none. */
export function UsageBar(props: { label: string; used: number; quota: number | null; unit?: string }) {
  const unit = props.unit ?? '';
  const text =
    props.quota === null
      ? `${props.used.toLocaleString('en')}${unit} (no quota)`
      : `${props.used.toLocaleString('en')}${unit} of ${props.quota.toLocaleString('en')}${unit}`;
  return (
    <div class="usage">
      <span class="usage-label">{props.label}</span>
      {props.quota !== null ? (
        <progress aria-label={`${props.label}: ${text}`} value={Math.min(props.used, props.quota)} max={Math.max(props.quota, 1)} />
      ) : null}
      <span class="usage-text">{text}</span>
    </div>
  );
}
