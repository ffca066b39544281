// The GraphQL schema: the same model as /api/v1. Connections take `first` (≤ 100) and `after`
// (the REST cursor); money is in minor units with its currency.

export const SDL = /* GraphQL */ `
  type Variant {
    id: ID!
    sku: String!
    title: String!
    priceMinor: Int!
    currency: String!
    "Stock in the default store (batched: one query for all variants of a response)."
    inventory: InventoryLevel
  }
  type Product {
    id: ID!
    title: String!
    description: String
    status: String!
    version: Int!
    createdAt: String!
    updatedAt: String!
    variants: [Variant!]!
  }
  type ProductConnection {
    nodes: [Product!]!
    nextCursor: String
  }
  type InventoryLevel {
    variantId: ID!
    storeId: ID!
    available: Int!
    lowStockThreshold: Int!
    low: Boolean!
  }
  type Customer {
    id: ID!
    email: String!
    name: String!
    createdAt: String!
    "Orders of this customer, newest first (batched across customers)."
    orders(first: Int = 10): [Order!]!
  }
  type CustomerConnection {
    nodes: [Customer!]!
    nextCursor: String
  }
  type OrderLine {
    sku: String!
    title: String!
    quantity: Int!
    unitPriceMinor: Int!
    totalMinor: Int!
  }
  type Order {
    id: ID!
    status: String!
    currency: String!
    subtotalMinor: Int!
    taxMinor: Int!
    shippingMinor: Int!
    totalMinor: Int!
    trackingNumber: String
    createdAt: String!
    "The customer (batched across orders)."
    customer: Customer
    lines: [OrderLine!]!
  }
  type OrderConnection {
    nodes: [Order!]!
    nextCursor: String
  }
  type DayFigures {
    date: String!
    revenueMinor: Int!
    orders: Int!
  }
  type TopProduct {
    productId: ID!
    title: String!
    quantity: Int!
    revenueMinor: Int!
  }
  type Analytics {
    revenueMinor: Int!
    orders: Int!
    averageOrderValueMinor: Int!
    newCustomers: Int!
    currency: String!
    byDay: [DayFigures!]!
    topProducts: [TopProduct!]!
  }
  type Query {
    products(first: Int = 20, after: String, status: String, q: String): ProductConnection!
    product(id: ID!): Product
    customers(first: Int = 20, after: String): CustomerConnection!
    customer(id: ID!): Customer
    orders(first: Int = 20, after: String, status: String): OrderConnection!
    order(id: ID!): Order
    analytics(from: String!, to: String!): Analytics!
  }
  input VariantInput {
    sku: String!
    title: String!
    priceMinor: Int!
    currency: String
    available: Int
    lowStockThreshold: Int
  }
  input ProductInput {
    title: String!
    description: String
    status: String
    variants: [VariantInput!]!
  }
  input OrderLineInput {
    sku: String
    variantId: ID
    quantity: Int!
  }
  input OrderInput {
    customerId: ID
    lines: [OrderLineInput!]!
    shippingMethod: String
    shippingCountry: String
  }
  type Mutation {
    createProduct(input: ProductInput!): Product!
    createCustomer(email: String!, name: String!): Customer!
    createOrder(input: OrderInput!): Order!
    transitionOrder(id: ID!, to: String!, trackingNumber: String): Order!
    adjustInventory(variantId: ID!, delta: Int!, reason: String!): InventoryLevel!
  }
`;
