-- NYC yellow taxi: trips and average fare by passenger count.
select
    passenger_count,
    count(*) as trips,
    avg(fare_amount) as avg_fare
from taxi
group by passenger_count
order by passenger_count;
