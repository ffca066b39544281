import { type Kysely, sql } from "kysely";

// place_order (0008) locks the levels an order takes in variant order before its conditional
// decrement: concurrent orders whose lines name the same variants in opposite order deadlocked,
// and after the caller's three attempts one of them failed. Same arguments and answer as 0008.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create or replace function place_order(p_order jsonb, p_lines jsonb, p_takes jsonb) returns jsonb
    language plpgsql as $$
    declare
      v_store text := p_order->>'storeId';
      v_id text := p_order->>'id';
      v_at timestamptz := (p_order->>'createdAt')::timestamptz;
      v_taken jsonb;
    begin
      -- Every level this order takes, locked in variant order first: two orders taking the same
      -- levels in opposite line order then wait for each other instead of deadlocking (the
      -- update's join would lock them in whatever order its plan reads them).
      perform 1
         from inventory_levels i
        where i.store_id = v_store
          and i.variant_id in (select x.v from jsonb_to_recordset(p_takes) as x(v text, quantity integer))
        order by i.variant_id
          for update;
      with t as (
        update inventory_levels i
           set available = i.available - x.quantity,
               low = i.low_stock_threshold > 0 and i.available - x.quantity <= i.low_stock_threshold,
               version = i.version + 1,
               updated_at = v_at
          from jsonb_to_recordset(p_takes) as x(v text, quantity integer)
         where i.variant_id = x.v and i.store_id = v_store and i.available >= x.quantity
        returning i.variant_id, i.available, i.low_stock_threshold, x.quantity)
      select coalesce(jsonb_agg(t), '[]'::jsonb) into v_taken from t;
      if jsonb_array_length(v_taken) < jsonb_array_length(p_takes) then
        return v_taken;
      end if;
      insert into orders (id, store_id, customer_id, status, currency, subtotal_minor, tax_minor,
                          shipping_minor, total_minor, shipping_method, shipping_address,
                          tracking_number, created_at, updated_at)
      values (v_id, v_store, p_order->>'customerId', 'pending', p_order->>'currency',
              (p_order->>'subtotalMinor')::bigint, (p_order->>'taxMinor')::bigint,
              (p_order->>'shippingMinor')::bigint, (p_order->>'totalMinor')::bigint,
              p_order->>'shippingMethod', nullif(p_order->'shippingAddress', 'null'::jsonb), null, v_at, v_at);
      insert into order_lines (id, order_id, position, variant_id, product_id, sku, title, quantity,
                               unit_price_minor, total_minor)
      select l.id, v_id, l.position, l.variant_id, l.product_id, l.sku, l.title, l.quantity,
             l.unit_price_minor, l.total_minor
        from jsonb_to_recordset(p_lines) as l(id text, position integer, variant_id text, product_id text,
                                              sku text, title text, quantity integer,
                                              unit_price_minor bigint, total_minor bigint);
      insert into order_status_history (order_id, from_status, to_status, note, at)
      values (v_id, null, 'pending', null, v_at);
      insert into inventory_adjustments (id, variant_id, store_id, delta, reason)
      select 'adj_' || gen_random_uuid(), t.variant_id, v_store, -t.quantity, 'order ' || v_id
        from jsonb_to_recordset(v_taken) as t(variant_id text, quantity integer);
      return v_taken;
    end $$;
  `.execute(db);
}
