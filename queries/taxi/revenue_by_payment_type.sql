-- NYC yellow taxi: trips, revenue and average tip by payment type
-- (1 credit card, 2 cash, 3 no charge, 4 dispute, 5 unknown, 6 voided).
select
    payment_type,
    count(*) as trips,
    sum(total_amount) as revenue,
    avg(tip_amount) as avg_tip
from taxi
group by payment_type
order by payment_type;
