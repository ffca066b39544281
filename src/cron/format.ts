import { wall } from "./gotime.ts";
import { zoneOffset } from "./zone.ts";

const pad = (n: number, w = 2) => String(n).padStart(w, "0");

/** ISO 8601 / RFC 3339 time of `date` on the wall clock of `zone`, with its offset (+00:00, never Z). */
export function formatInZone(date: Date, zone: string): string {
  const ms = Math.floor(date.getTime() / 1000) * 1000;
  const w = wall(zone, ms);
  const off = zoneOffset(zone, ms) / 1000;
  const sign = off < 0 ? "-" : "+";
  const abs = Math.abs(off);
  const offText = `${sign}${pad(Math.floor(abs / 3600))}:${pad(Math.floor((abs % 3600) / 60))}`;
  return `${pad(w.year, 4)}-${pad(w.month)}-${pad(w.day)}T${pad(w.hour)}:${pad(w.minute)}:${pad(w.second)}${offText}`;
}
